"""sallyanne: a false-belief story told line by line, as if narrating a TV show (ToMi style).

Two people are in a room where an object lies in a container. One of them may leave; the other
moves the object to another container. Distractor lines (who likes or dislikes what, who walks
into other rooms) are mixed in. Every story line is its own message, spread over the span, and
the question asks for a one-word JSON answer.

Question types:
- theory_of_mind: where will the person who left *before* the move look for the object? (the first container)
- first_order: where will that person look for it, where the person either left before the move
  (false belief: the first container) or saw it (true belief: the second container)
- reality: where is the object now? (the second container)
- memory: where was the object at the beginning? (the first container)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._scoring.rules import extract_json, normalize

PEOPLE = [
    "Amara", "Bruno", "Celeste", "Dmitri", "Elodie", "Farid", "Greta", "Hugo", "Ingrid", "Jonas", "Kaito", "Leila",
    "Marek", "Nadia", "Oskar", "Paloma", "Quentin", "Rosa", "Stellan", "Tamsin", "Ulrich", "Vera", "Wendell", "Yara",
]
ROOMS = [
    "kitchen", "attic", "garage", "cellar", "hallway", "study", "bedroom", "bathroom", "dining room", "workshop",
    "library", "nursery", "laundry room", "lounge", "conservatory", "greenhouse", "playroom", "office",
]
# Single words, none of them a room: the answer is one word.
CONTAINERS = [
    "basket", "drawer", "suitcase", "cupboard", "box", "crate", "bucket", "chest", "envelope", "backpack",
    "pantry", "cabinet", "hamper", "locker", "barrel", "jar", "wardrobe", "trunk", "sack", "tub", "carton",
    "satchel", "briefcase", "toolbox",
]
OBJECTS = [  # (name, plural)
    ("scarf", False), ("gloves", True), ("sunglasses", True), ("notebook", False), ("teapot", False),
    ("umbrella", False), ("slippers", True), ("wallet", False), ("compass", False), ("harmonica", False),
    ("kite", False), ("jigsaw", False), ("lantern", False), ("trumpet", False), ("socks", True),
    ("binoculars", True), ("torch", False), ("hat", False), ("keys", True), ("marbles", True),
]
FOODS = [
    "turnips", "pickles", "mangoes", "broccoli", "sardines", "pancakes", "lentils", "coconut", "spinach",
    "anchovies", "radishes", "figs", "celery", "mushrooms", "porridge", "liquorice", "parsnips", "kiwis",
]

INTRO = ("I'm watching a TV show. I'll tell you what happens as it goes, and when it's over I'll ask you "
         "a question about it. Okay?")
ENTER = "On the show, {who} walks into the {room}."
EXIT = "On the show, {who} leaves the {room}."
PLACED = "On the show, the {obj} {be} in the {container}."
MOVED = "On the show, {who} moves the {obj} to the {container}."
LIKES = ["On the show, {who} says they love {food}.", "On the show, {who} admits to a weakness for {food}."]
DISLIKES = ["On the show, {who} says they can't stand {food}.", "On the show, {who} refuses to eat {food}."]
QUESTIONS = {
    "belief": "The show is over for today. Where will {who} look for the {obj}?",
    "reality": "The show is over for today. Where {be} the {obj} really?",
    "memory": "The show is over for today. Where {was} the {obj} at the beginning of the show?",
}
ANSWER_FORMAT = '\nAnswer in JSON with a single word, like this: {"answer": "word"}'
IGNORED = {"in", "inside", "into", "within", "the", "a", "an", "their", "his", "her"}

QuestionType = Literal["theory_of_mind", "first_order", "reality", "memory"]


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def answer_words(text: str) -> list[str]:
    """The words of an answer without leading articles and prepositions, singular."""
    words = normalize(text).split()
    while words and words[0] in IGNORED:
        words.pop(0)
    return [singular(w) for w in words]


class SallyAnneParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question_type: QuestionType = "theory_of_mind"


class SallyAnne(DatasetInterface):
    name = "sallyanne"
    description = "A TV show is narrated line by line; the agent must say where someone will look for an object, or where it is."
    reset_message = "Please forget the TV show I told you about."
    Params = SallyAnneParams
    params: SallyAnneParams  # the validated args, typed

    def _story(self) -> tuple[list[str], str, int, str]:
        """Story lines (without intro and question), the question, the answer line within the story, the answer."""
        rng = self.rng
        qtype = self.params.question_type
        a, b, c = rng.sample(PEOPLE, 3)  # a: the one asked about; b: moves the object; c: a bystander elsewhere
        room, other_room, later_room = rng.sample(ROOMS, 3)
        first, second = rng.sample(CONTAINERS, 2)
        obj, plural = rng.choice(OBJECTS)
        be, was = ("are", "were") if plural else ("is", "was")
        # Whether a leaves before the move (always for theory_of_mind; reality and memory ask about the
        # object only, but their stories vary the same way).
        false_belief = True if qtype == "theory_of_mind" else rng.random() < 0.5

        lines: list[str] = []

        def distractor() -> None:
            who = rng.choice([a, b, c])
            template = rng.choice(LIKES if rng.random() < 0.5 else DISLIKES)
            lines.append(template.format(who=who, food=rng.choice(FOODS)))

        enters = [ENTER.format(who=a, room=room), ENTER.format(who=b, room=room)]
        rng.shuffle(enters)
        lines += enters
        if rng.random() < 0.5:
            lines.insert(rng.randint(0, len(lines)), ENTER.format(who=c, room=other_room))
        placed = len(lines)
        lines.append(PLACED.format(obj=obj, be=be, container=first))
        if rng.random() < 0.5:
            distractor()
        if false_belief:
            a_exit = len(lines)
            lines.append(EXIT.format(who=a, room=room))
            if rng.random() < 0.5:
                distractor()
            moved = len(lines)
            lines.append(MOVED.format(who=b, obj=obj, container=second))
        else:
            moved = len(lines)
            lines.append(MOVED.format(who=b, obj=obj, container=second))
            if rng.random() < 0.5:
                distractor()
            if rng.random() < 0.5:
                lines.append(EXIT.format(who=a, room=room))  # after the move: a saw it
        # Afterwards: the mover may leave, a may go elsewhere, one more distractor may follow.
        if rng.random() < 0.5:
            lines.append(EXIT.format(who=b, room=room))
        if false_belief and rng.random() < 0.5:
            lines.append(ENTER.format(who=a, room=later_room))
        if rng.random() < 0.5:
            distractor()

        # The answer line: the last line that carries information the answer needs.
        # - A false belief (theory_of_mind, first_order when a left first): the answer is the first
        #   container; a must have seen it placed (placement line) and must have left before the
        #   move (a's exit). The exit always follows the placement, so it is the answer line. The
        #   move itself adds nothing the answer needs (without it the answer would be the same):
        #   it is the trap the question tests, and it lies inside the measured gap.
        # - A true belief (first_order when a stayed) and reality: the answer is the second
        #   container, known from the move line; a's later exit (if any) changes nothing.
        # - memory: the answer is the first container, known from the placement line.
        if qtype == "memory":
            answer, answer_line = first, placed
            question = QUESTIONS["memory"].format(obj=obj, was=was)
        elif qtype == "reality":
            answer, answer_line = second, moved
            question = QUESTIONS["reality"].format(obj=obj, be=be)
        elif false_belief:
            answer, answer_line = first, a_exit
            question = QUESTIONS["belief"].format(who=a, obj=obj)
        else:
            answer, answer_line = second, moved
            question = QUESTIONS["belief"].format(who=a, obj=obj)
        return lines, question + ANSWER_FORMAT, answer_line, answer

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            story, question, answer_line, answer = self._story()
            script = [INTRO] + story + [question]
            examples.append(self.make_example(
                i, script, [False] * (len(script) - 1) + [True], [answer],
                oracle_answers=[f'{{"answer": "{answer}"}}'],
                extra={"question_type": self.params.question_type, "answer_line": answer_line + 1},
            ))
        return examples

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        """The "answer" of the reply's JSON must be the expected container ("the pantry", "pantries" count).

        A reply without JSON counts only if it is that single word (articles allowed).
        """
        expected = expected_answers[0]
        want = answer_words(expected)
        reply = responses[0] if responses else ""
        data = extract_json(reply)
        if isinstance(data, dict):
            value = next((v for k, v in data.items() if str(k).strip().lower() == "answer"), None)
            if value is None:
                return 0.0, 1.0, ['The JSON in the answer has no "answer" field.']
            if not isinstance(value, str):
                return 0.0, 1.0, [f'The "answer" field is {value!r}, not a word.']
            if answer_words(value) == want:
                return 1.0, 1.0, [f'The "answer" field is {value!r}, which is {expected!r}.']
            return 0.0, 1.0, [f'The "answer" field is {value!r}, but the answer is {expected!r}.']
        if data is not None:
            return 0.0, 1.0, [f"The answer's JSON is not an object with an \"answer\" field: {data!r}."]
        words = answer_words(reply)
        if words == want:
            return 1.0, 1.0, [f"The answer has no JSON but is the single word {expected!r}."]
        return 0.0, 1.0, [f"The answer has no JSON and is not the single word {expected!r}."]

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        line = example.extra.get("answer_line")
        if not isinstance(line, int) or not 0 <= line < len(example.script):
            return super().answer_statement_idx(example)  # e.g. an imported definition
        return line, len(example.script[line])
