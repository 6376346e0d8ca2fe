"""The reply of an agent that has no answer to give (an imported answers file with none for the question): the
question is unscored with REASON (ltm_harness/_authoring/unanswered.py), and no judge is asked about it."""

NOT_ANSWERED = "[no answer in the imported file]"
REASON = "unscored: the imported file has no answer to this question"
