"""Environments in the long conversation: one dataset per kind of environment (ltm_harness.envs).

Each example is one episode (or one problem set) with its own seed; its steps are spread over the
memory span between the other tests, and its score is the environment's normalised score. Args are
the environment's params (see docs/environments.md) plus `spread_percent` (the share of the span the
steps are spread over, default 90) and, for problem sets, `page_size` (problems per message).
"""

from __future__ import annotations

from ltm_harness._envs.bandit import BanditParams
from ltm_harness._envs.cipher import CipherParams
from ltm_harness._envs.in_conversation import EnvDataset, InConversation, PassiveInConversation
from ltm_harness._envs.guess import GuessParams
from ltm_harness._envs.keydoor import KeyDoorParams


class BanditArgs(BanditParams, InConversation):
    pass


class KeyDoorArgs(KeyDoorParams, InConversation):
    pass


class GuessArgs(GuessParams, InConversation):
    pass


class CipherArgs(CipherParams, PassiveInConversation):
    pass


class EnvBandit(EnvDataset):
    name = "env_bandit"
    env_test = "bandit"
    description = "A multi-armed bandit played over the conversation; only the last pull's result is shown."
    Params = BanditArgs


class EnvKeyDoor(EnvDataset):
    name = "env_keydoor"
    env_test = "keydoor"
    description = "A key-and-door grid world (5x5, 6x6 or 7x7) described in text, one move per message."
    Params = KeyDoorArgs


class EnvGuess(EnvDataset):
    name = "env_guess"
    env_test = "guess"
    description = "Find a secret number told only 'too high' or 'too low' about the last guess."
    Params = GuessArgs


class EnvCipher(EnvDataset):
    name = "env_cipher"
    env_test = "cipher"
    description = "A problem set: decode enciphered words from worked examples (shift or substitution cipher)."
    Params = CipherArgs
