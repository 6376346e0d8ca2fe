"""spy_meeting: three people send coded messages far apart; the agent must decode when, where and what to bring.

The first line names the three senders. Each later line is one sender's coded message about one
topic: the time of the meeting, its place, or a thing to bring ("We meet when the rooster crows").
The question asks for all three. Each topic is worth a third: it counts when the reply names one
of the topic's accepted meanings ("dawn", "sunrise", ...) and none of the meanings of the other
codes of that topic (hedging between "dawn" and "midnight" is confusion, not an answer). A topic
the reply names no known meaning for at all (a synonym the lists lack, say) is inconclusive: the
LLM judge decides it when the run has one; without a judge it scores 0 and the reason says why.

`expected_responses` holds one list of accepted meanings per message line, in script order (the
reference benchmark's format); `extra` says each line's topic and the meanings that count as
confusion for it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._scoring.rules import contains_phrase
from ltm_harness._scoring.verdict import Judge

Topic = Literal["time", "place", "thing"]
TOPICS: tuple[Topic, ...] = ("time", "place", "thing")

# (code, accepted meanings). No meaning occurs in any code, the intro or the question, so repeating the
# messages back is not an answer; the meanings of one topic's codes do not overlap.
CODES: dict[Topic, list[tuple[str, list[str]]]] = {
    "time": [
        ("when the rooster crows", ["dawn", "sunrise", "daybreak", "first light", "early morning", "crack of dawn"]),
        ("when the shadows are at their shortest", ["noon", "midday", "12 pm", "12:00", "twelve o'clock", "lunchtime"]),
        ("when the sun dips below the hills", ["sunset", "dusk", "sundown", "evening", "twilight"]),
        ("when the whole town is asleep", ["midnight", "night", "nighttime", "night-time", "late at night", "after dark"]),
    ],
    "place": [
        ("where the ships unload their cargo", ["harbour", "harbor", "port", "docks", "dock", "quay", "wharf", "pier", "seaport"]),
        ("where the old locomotives are kept", ["railway yard", "rail yard", "train yard", "railyard", "depot", "sidings",
                                                "engine shed", "train station", "railway station"]),
        ("where the dead are laid to rest", ["cemetery", "graveyard", "churchyard", "burial ground", "crypt"]),
        ("where the grapes grow in rows", ["vineyard", "winery"]),
        ("where the planes are kept", ["airfield", "airport", "hangar", "airstrip", "aerodrome"]),
    ],
    "thing": [
        ("a way to cross the river", ["boat", "raft", "canoe", "kayak", "dinghy", "ferry"]),
        ("a way to get over the wall", ["ladder", "rope", "grappling hook"]),
        ("a way to talk to us from far away", ["radio", "walkie-talkie", "walkie talkie", "satellite phone", "phone", "telephone"]),
        ("a way to see in the dark", ["torch", "flashlight", "lamp", "lantern"]),
        ("a way to hide your face", ["mask", "disguise", "balaclava", "fake beard"]),
    ],
}
LINES: dict[Topic, str] = {
    "time": "{who}: We meet {code}.",
    "place": "{who}: The meeting place is {code}.",
    "thing": "{who}: Be sure to bring {code}.",
}
NOUN: dict[str, str] = {"time": "time", "place": "place", "thing": "thing to bring"}
GIVEN = ["Ada", "Bram", "Cosima", "Dorian", "Elspeth", "Fergus", "Ginevra", "Horace", "Isolde", "Jago", "Kezia",
         "Lorcan", "Morwenna", "Nye", "Ottilie", "Piran", "Roisin", "Silas", "Tegan", "Ulysses"]
SURNAMES = ["Ashdown", "Blackwood", "Carrick", "Dunmore", "Elsworth", "Fairbairn", "Garside", "Hollis", "Inchbald",
            "Jessop", "Kilbride", "Lockhart", "Merriman", "Northcote", "Oakes", "Pengelly", "Quarrie", "Rowntree",
            "Stainforth", "Trevelyan"]
INTRO = "Over the coming while you will get three coded messages, from {a}, {b} and {c}. Keep them in mind."
QUESTION = ("Putting the three coded messages together, tell me as precisely as you can when and where the meeting "
            "will take place and what I should bring.")
CONTEXT = (
    "A spy received coded messages about a meeting and was asked when and where it is and what to bring. Grade only "
    "the {noun}: the coded message was {code!r}, and the expected meaning is given. Score 1 if the response decodes "
    "the {noun} to that meaning or a clear synonym of it, 0 if it gives another meaning, several competing meanings, "
    "or none.")


class SpyMeetingParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


def rivals_of(topic: Topic, accepted: list[str]) -> list[str]:
    """The meanings of the topic's other codes: naming one of them is confusion."""
    taken = {a.lower() for a in accepted}
    return [m for _, meanings in CODES[topic] for m in meanings if m.lower() not in taken]


class SpyMeeting(DatasetInterface):
    name = "spy_meeting"
    description = ("Three people send coded messages about a meeting far apart; the agent must say when and where "
                   "it is and what to bring.")
    reset_message = "Please forget the coded messages I passed on to you."
    Params = SpyMeetingParams

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            senders = [f"{g} {s}" for g, s in zip(self.rng.sample(GIVEN, 3), self.rng.sample(SURNAMES, 3))]
            order = self.rng.sample(TOPICS, 3)
            speakers = self.rng.sample(senders, 3)
            script = [INTRO.format(a=senders[0], b=senders[1], c=senders[2])]
            expected: list[list[str]] = []
            codes: list[str] = []
            for topic, who in zip(order, speakers):
                code, meanings = self.rng.choice(CODES[topic])
                script.append(LINES[topic].format(who=who, code=code))
                expected.append(list(meanings))
                codes.append(code)
            script.append(QUESTION)
            answer = {t: m[0] for t, m in zip(order, expected)}
            oracle = f"We meet at {answer['time']}, at the {answer['place']}, and I should bring this: {answer['thing']}."
            examples.append(self.make_example(
                i, script, [False] * 4 + [True], expected, oracle_answers=[oracle],
                extra={"topics": list(order), "codes": codes,
                       "rivals": [rivals_of(t, m) for t, m in zip(order, expected)]},
            ))
        return examples

    @staticmethod
    def _topics(example: TestExample) -> list[tuple[str, str, list[str], list[str]]]:
        """(topic, code, accepted, rivals) per message line; without `extra`, topics are unknown and nothing is a rival."""
        extra = example.extra
        n = len(example.expected_responses)
        topics = extra.get("topics") or ["detail"] * n
        codes = extra.get("codes") or [""] * n
        rivals = extra.get("rivals") or [[] for _ in range(n)]
        return [(str(t), str(c), [str(a) for a in acc], [str(r) for r in riv])
                for t, c, acc, riv in zip(topics, codes, example.expected_responses, rivals)]

    @staticmethod
    def _topic_rule(response: str, topic: str, accepted: list[str], rivals: list[str]) -> tuple[float, str, bool]:
        """(score 0..1, reason, conclusive) for one topic."""
        noun = NOUN.get(topic, topic)
        hits = [a for a in accepted if contains_phrase(response, a)]
        confused = [r for r in rivals if contains_phrase(response, r)]
        if hits and not confused:
            return 1.0, f"{noun}: {hits[0]!r} is right.", True
        if hits and confused:
            return 0.0, f"{noun}: names {hits[0]!r} but also {confused[0]!r} (confused).", False
        if confused:
            return 0.0, f"{noun}: {confused[0]!r} is wrong (expected one of {accepted}).", True
        return 0.0, f"{noun}: none of {accepted} is named.", False

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        response = responses[0] if responses else ""
        score, reasons = 0.0, []
        for topic, _, accepted, rivals in self._topics(example):
            s, reason, conclusive = self._topic_rule(response, topic, accepted, rivals)
            score += s
            reasons.append(reason if conclusive else f"{reason} Inconclusive by rules; no judge, so it scores {s:g}.")
        n = max(len(example.expected_responses), 1)
        return score / n, 1.0, reasons

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        example = TestExample(dataset_name=self.name, example_id="-", script=[QUESTION], is_question=[True],
                              expected_responses=expected_answers)
        return self.evaluate_example(example, questions, responses)

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        if judge is None:
            score, max_score, reasons = self.evaluate_example(example, questions, responses)
            return TestOutcome(score, max_score, reasons)
        response = responses[0] if responses else ""
        question = questions[0] if questions else QUESTION
        total, reasons, verdicts = 0.0, [], []
        topics = self._topics(example)
        for topic, code, accepted, rivals in topics:
            s, reason, conclusive = self._topic_rule(response, topic, accepted, rivals)
            if conclusive:
                total += s
                reasons.append(reason)
                continue
            noun = NOUN.get(topic, topic)
            verdict = await judge.grade(question, f"{noun}: {accepted[0]} (or: {', '.join(accepted[1:]) or '-'})",
                                        response, context=CONTEXT.format(noun=noun, code=code or "unknown"))
            verdicts.append(verdict)
            total += verdict.score
            reasons.append(f"{reason} Inconclusive by rules; judge {verdict.model}: {verdict.score:g} ({verdict.reason}).")
        return TestOutcome(total / max(len(topics), 1), 1.0, reasons, verdicts=verdicts)
