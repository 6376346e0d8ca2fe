"""AIQ-style test environments for chat agents: active (act step by step) and passive (a problem set).

`make_env(name, seed=..., **params)` builds one by name; `ActiveEnv` and `PassiveEnv` are the bases to
write new ones (docs/environments.md). Built in: bandit, keydoor (5x5, 6x6, 7x7), guess, cipher
(shift, substitution).
"""

from ltm_harness._envs.base import ActiveEnv, Env, PassiveEnv
from ltm_harness._envs.header import (Action, EnvHeader, EnvParams, Example, GradedAnswers, InvalidAction, Observation,
                                      Space, StepResult)
from ltm_harness._envs.parsing import parse_action, parse_answers
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
]
