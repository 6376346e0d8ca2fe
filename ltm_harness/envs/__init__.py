"""AIQ-style test environments for chat agents: active (act step by step) and passive (a problem set).

`make_env(name, seed=..., **params)` builds one by name; `ActiveEnv` and `PassiveEnv` are the bases to
write new ones, `EnvDataset` puts one into the long conversation, `run_aiq` plays tests with chat agents and
`evaluate_policy` with a Python policy (docs/environments.md). Built in: bandit, keydoor (5x5, 6x6, 7x7), guess,
cipher (shift, substitution).
"""

from ltm_harness._envs.base import ActiveEnv, Env, PassiveEnv
from ltm_harness._envs.header import (Action, EnvHeader, EnvParams, Example, GradedAnswers, InvalidAction, Observation,
                                      Space, StepResult)
from ltm_harness._envs.in_conversation import EnvDataset, InConversation, PassiveInConversation
from ltm_harness._envs.parsing import parse_action, parse_answers
from ltm_harness._envs.play import aiq_score, evaluate_policy, optimal_policy, play_policy, random_policy
from ltm_harness._protocols.aiq import run_aiq
from ltm_harness._envs.catalog import (
    ENVIRONMENTS,
    TestSpec,
    env_class,
    known_envs,
    make_env,
    parse_test_spec,
    register_env,
)

__all__ = [
    "Action", "ActiveEnv", "Env", "EnvHeader", "EnvParams", "Example", "GradedAnswers", "InvalidAction",
    "Observation", "PassiveEnv", "Space", "StepResult", "parse_action", "parse_answers", "ENVIRONMENTS",
    "TestSpec", "env_class", "known_envs", "make_env", "parse_test_spec", "register_env",
    "EnvDataset", "InConversation", "PassiveInConversation", "run_aiq", "evaluate_policy", "aiq_score",
    "optimal_policy", "random_policy", "play_policy",
]
