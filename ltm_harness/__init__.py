"""ltm-harness: tests the long-term memory of conversational LLM agents."""

from ltm_harness.dataset import DatasetInterface
from ltm_harness.example import DynamicExample, TestExample, Wait, spread_waits
from ltm_harness.program import Heard, TestContext, TestOutcome

__all__ = ["DatasetInterface", "DynamicExample", "TestExample", "Wait", "spread_waits", "Heard", "TestContext", "TestOutcome"]
__version__ = "0.1.0"
