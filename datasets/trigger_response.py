"""trigger_response: the user sets up a trigger and a response phrase, then triggers it several times."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._scoring.verdict import Judge
from ltm_harness._scoring.rules import contains_phrase, word_overlap

INSTRUCTION = "From now on, whenever I {trigger}, reply with: '{response}'"
MATCH = 0.8  # share of the phrase's words a reply may contain instead of the exact phrase
MAYBE = 0.4  # below MATCH but at least this: perhaps a paraphrase (the judge decides, when there is one)
JUDGE_CONTEXT = ("The user asked the assistant to reply with a set phrase whenever they do something. The response is "
                 "correct if it gives that phrase, word for word or with the same meaning in other words.")

# (what the user will do, the phrase to reply with, messages that do it)
TRIGGERS: list[tuple[str, str, list[str]]] = [
    ("say that I feel sleepy", "Stand up and stretch for a minute.", [
        "I'm getting really sleepy.",
        "Ugh, I feel so sleepy right now.",
        "I could nod off right here, I'm that sleepy.",
    ]),
    ("tell you I want to buy something expensive", "Sleep on it before you spend it.", [
        "I really want to buy that expensive watch I saw yesterday.",
        "I'm tempted to get a very pricey new laptop.",
        "I feel like splashing out on some expensive headphones.",
    ]),
    ("complain about the weather", "Every cloud is just passing through.", [
        "This weather is awful; it has been drizzling all week.",
        "I hate how windy and cold it is outside today.",
        "The weather is so gloomy, I can't stand it.",
    ]),
    ("tell you I'm bored", "Learn one new word today.", [
        "I'm so bored right now.",
        "There's nothing to do and I'm bored out of my mind.",
        "Honestly, I'm bored stiff.",
    ]),
    ("say I'm craving something sweet", "Have a piece of fruit and wait ten minutes.", [
        "I'm craving something sweet, like a big slice of cake.",
        "I really fancy some chocolate right now.",
        "My sweet tooth is acting up again; I want cookies.",
    ]),
    ("mention that I forgot something", "Write it on a sticky note next time.", [
        "Oh no, I forgot my keys at the office again.",
        "I forgot to call my sister back yesterday.",
        "I completely forgot about this morning's meeting.",
    ]),
    ("tell you I'm nervous about something", "Breathe in for four and out for six.", [
        "I'm nervous about my presentation tomorrow.",
        "My job interview is this afternoon and I'm really nervous.",
        "I get so nervous before flights.",
    ]),
    ("say I want to skip my workout", "Just put your trainers on and see how you feel.", [
        "I really don't feel like going to the gym today.",
        "I think I'll skip my run this evening.",
        "Maybe I'll give today's workout a miss.",
    ]),
    ("tell you I can't fall asleep", "Put the screen away and read a page of a book.", [
        "It's late and I still can't fall asleep.",
        "I've been lying awake for hours.",
        "I just can't seem to get to sleep tonight.",
    ]),
    ("say I'm running late", "Send a quick message to let them know.", [
        "I'm running late for dinner with my friends.",
        "The bus hasn't come and I'm going to be late.",
        "I overslept, so I'm late for work.",
    ]),
    ("tell you I've finished a task", "Well done, tick it off the list.", [
        "I just finished writing the quarterly report.",
        "Finally, the laundry is done.",
        "I've completed my tax forms at last.",
    ]),
    ("say I'm hungry", "Check the fridge before you order a takeaway.", [
        "I'm starving.",
        "I'm so hungry I could eat a horse.",
        "My stomach is rumbling, I need food.",
    ]),
    ("tell you I'm stressed about work", "One thing at a time, starting with the smallest.", [
        "Work is stressing me out this week.",
        "I have way too many deadlines at work and I'm stressed.",
        "My boss keeps piling on tasks and I'm feeling the pressure.",
    ]),
    ("say I want to learn something new", "Start with fifteen minutes a day.", [
        "I'd love to learn to play the piano.",
        "I'm thinking of learning Spanish.",
        "I want to pick up a new skill, maybe pottery.",
    ]),
    ("mention that I argued with someone", "Give it a day before you reply.", [
        "I had a fight with my brother on the phone.",
        "My neighbour and I had a heated argument this morning.",
        "I argued with a colleague about the project plan.",
    ]),
    ("say I feel lonely", "Call someone you have not spoken to in a while.", [
        "I've been feeling a bit lonely lately.",
        "Nobody has called me all week and I feel lonely.",
        "It's a quiet weekend and I'm feeling rather lonely.",
    ]),
]


class TriggerResponseParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    triggers: int = Field(default=3, ge=1, le=20)


class TriggerResponse(DatasetInterface):
    name = "trigger_response"
    description = "The user sets a trigger and a reply phrase; the agent must reply with the phrase whenever triggered."
    reset_message = "You no longer need to reply to me with any set phrase."
    Params = TriggerResponseParams
    params: TriggerResponseParams  # the validated args, typed

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        n = self.params.triggers
        for i in range(num_examples):
            trigger, response, messages = self.rng.choice(TRIGGERS)
            order = self.rng.sample(messages, len(messages))  # distinct messages first, then repeated
            lines = [order[k % len(order)] for k in range(n)]
            script = [INSTRUCTION.format(trigger=trigger, response=response)] + lines
            # Waits: the default spread, the first trigger at 90/n % of the span and the last at 90 %.
            examples.append(self.make_example(
                i, script, [False] + [True] * n, [response] * n, oracle_answers=[response] * n,
            ))
        return examples

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        """Rules first; a reply that shares some but too few of the phrase's words goes to the judge."""
        score, max_score, reasons = self.evaluate_correct(questions, responses, example.expected_responses)
        verdicts = []
        for i, (question, reply, phrase) in enumerate(zip(questions, responses, example.expected_responses)):
            overlap = word_overlap(reply, phrase)
            if contains_phrase(reply, phrase) or overlap >= MATCH or overlap < MAYBE:
                continue
            if judge is None:
                reasons[i] += " Inconclusive by rules (a paraphrase?); no judge was given."
                continue
            verdict = await judge.grade(question, phrase, reply, context=JUDGE_CONTEXT)
            verdicts.append(verdict)
            score += verdict.score
            reasons[i] += f" judge {verdict.model}: {verdict.score:g} ({verdict.reason})"
        return TestOutcome(score, max_score, reasons, verdicts=verdicts)

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        """One point per triggered reply that holds the phrase (exactly, or >= 80% of its words)."""
        score, reasons = 0.0, []
        for i, (reply, phrase) in enumerate(zip(responses, expected_answers), start=1):
            overlap = word_overlap(reply, phrase)
            if contains_phrase(reply, phrase) or overlap >= MATCH:
                score += 1
                reasons.append(f"Trigger {i}: the reply contains {phrase!r}.")
            else:
                reasons.append(f"Trigger {i}: the reply does not contain {phrase!r} (word overlap {overlap:.2f}).")
        return score, float(len(expected_answers)), reasons
