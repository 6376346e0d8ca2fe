"""An example suite of the built-in text environments, runnable offline (also known by the name `text-envs`):

    python -m ltm_harness suite ltm_harness.aivle.examples:suite -a retrieval
    python -m ltm_harness suite text-envs -a oracle -a null
"""

from ltm_harness._protocols.aivle.examples import build_suite, suite

__all__ = ["build_suite", "suite"]
