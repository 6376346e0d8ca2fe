"""LoCoMo (snap-research/locomo, ACL 2024): its data file read into typed models (`data`), fetched on first use
(`fetch`), its reference QA scoring (`scoring`) and our LLM-judge prompts for the vendors' J number (`judge`).
Pure parts with no engine dependency; the `locomo` dataset builds its tests from them."""
