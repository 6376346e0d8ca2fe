"""ltm-harness: tests the long-term memory of conversational LLM agents."""

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import DynamicExample, TestExample, Wait, spread_waits
from ltm_harness._engine.program import Heard, TestContext, TestOutcome

__all__ = ["DatasetInterface", "DynamicExample", "TestExample", "Wait", "spread_waits", "Heard", "TestContext", "TestOutcome"]
__version__ = "0.1.0"
