"""restaurant: a dynamic role-play; the harness is the waiter and the agent is the customer.

The waiter shows the menu, takes the drink and food order, then tells the agent that the dish it
ordered has just run out (decided from the agent's own reply, so the script is written during the
run), serves, and much later asks the customer to recall the order and to pick a dessert from the
menu shown at the start. Five sub-scores, one point each:

1. drink: the reply orders a drink from the menu;
2. food: the reply orders a main course from the menu;
3. change: after the dish runs out, the reply picks another main course from the menu;
4. recall: the reply names the drink and the main course finally served;
5. menu: the reply orders a dessert from the menu (shown once, at the start).

With a test LLM in the run (config.test_llm), the waiter's small talk comes from it (the facts of
each line, such as which dish ran out, are always the harness's own, so scoring stays by rules); its
replies are recorded in the event log and replayed on resume or re-score. With a judge, a reply to
the run-out line that names no main course is judged instead of scored 0.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import DynamicExample, TestExample, Wait
from ltm_harness._engine.program import TestContext, TestOutcome
from ltm_harness._scoring.rules import contains_phrase
from ltm_harness._scoring.verdict import Judge

RESTAURANTS = ["The Copper Kettle", "Luna Verde", "The Salt House", "Maple & Thyme", "Casa Orilla", "The Brass Lantern"]
DRINKS = ["elderflower lemonade", "iced hibiscus tea", "ginger beer", "sparkling water", "mango lassi",
          "cold brew coffee", "apple spritzer", "mint tea"]
MAINS = ["mushroom risotto", "grilled sea bass", "lamb tagine", "aubergine parmigiana", "chicken katsu curry",
         "beef bourguignon", "pumpkin gnocchi", "prawn linguine", "jackfruit tacos", "duck confit"]
DESSERTS = ["sticky toffee pudding", "lemon posset", "chocolate fondant", "pistachio gelato", "apple crumble",
            "crème brûlée", "mango sorbet"]
SUBSCORES = ["drink", "food", "change", "recall", "menu"]
# Where each planned line is said, as a share of the memory span after the test starts.
POINTS = [0.0, 10.0, 20.0, 30.0, 40.0, 80.0, 90.0]
WAITER_PROMPT = ("You are a friendly waiter at {restaurant}. Write one short, natural sentence of small talk to the "
                 "customer that fits this moment: {moment}. Do not mention any food, drink or price.")
CHANGE_CONTEXT = ("The waiter said the dish the customer ordered has run out and asked for another choice. The response "
                  "is correct if it chooses another main course from the menu.")


class RestaurantParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _menu_text(menu: dict[str, list[str]]) -> str:
    return "; ".join(f"{part}: {', '.join(items)}" for part, items in menu.items())


def mentioned(reply: str, items: list[str]) -> list[str]:
    """The items of `items` named in `reply`, in menu order."""
    return [item for item in items if contains_phrase(reply, item)]


def story(menu: dict[str, list[str]], replies: list[str]) -> tuple[str, str, str]:
    """(drink served, dish that ran out, dish served), as the agent's replies decide them.

    The drink and the first dish are the first ones the agent named (else the menu's first); the dish
    that runs out is the one it ordered; the dish served is the first other main it then named."""
    replies = list(replies) + [""] * (3 - len(replies))
    drink = (mentioned(replies[0], menu["drinks"]) or [menu["drinks"][0]])[0]
    gone = (mentioned(replies[1], menu["mains"]) or [menu["mains"][0]])[0]
    others = [m for m in menu["mains"] if m != gone]
    served = ([m for m in mentioned(replies[2], menu["mains"]) if m != gone] or others)[0]
    return drink, gone, served


class Restaurant(DatasetInterface):
    name = "restaurant"
    description = "Dynamic waiter role-play: order, react to a dish running out, recall the order, order from the menu."
    reset_message = "The restaurant role-play is over; we are no longer in the restaurant."
    Params = RestaurantParams

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples: list[TestExample] = []
        for i in range(num_examples):
            restaurant = self.rng.choice(RESTAURANTS)
            menu = {"drinks": self.rng.sample(DRINKS, 3), "mains": self.rng.sample(MAINS, 4),
                    "desserts": self.rng.sample(DESSERTS, 3)}
            drink, first, second, dessert = menu["drinks"][0], menu["mains"][0], menu["mains"][1], menu["desserts"][0]
            # The planned lines, as they go when the agent orders the first items (the oracle's path).
            script = [
                self._opening(restaurant, menu),
                "What would you like to drink?",
                f"Here is your {drink}. What would you like to eat?",
                f"I am so sorry, the kitchen has just run out of the {first}. What would you like instead?",
                f"Here is your {second}. Enjoy your meal!",
                "Before I bring the bill: could you remind me what you had to drink and what you had to eat?",
                "Would you like a dessert? Please choose one from the menu I showed you at the start.",
            ]
            is_question = [False, True, True, True, False, True, True]
            waits = [Wait(percentage_finished=POINTS[k + 1]) for k in range(len(script) - 1)] + [Wait()]
            oracle = [f"I'd like the {drink}, please.", f"I'll have the {first}, please.",
                      f"Then I'll have the {second}, please.", f"I had the {drink} and the {second}.",
                      f"The {dessert}, please."]
            examples.append(DynamicExample(
                dataset_name=self.name, example_id=str(i), script=script, is_question=is_question, waits=waits,
                expected_responses=[f"a drink from {menu['drinks']}", f"a main course from {menu['mains']}",
                                    "another main course", "the drink and the main course served",
                                    f"a dessert from {menu['desserts']}"],
                oracle_answers=oracle, extra={"restaurant": restaurant, "menu": menu},
            ))
        return examples

    @staticmethod
    def _opening(restaurant: str, menu: dict[str, list[str]]) -> str:
        return (f"Let's play a role-play game: you are a customer at the restaurant {restaurant} and I am your waiter. "
                f"Answer as the customer. Here is our menu. {_menu_text(menu)}.")

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        # Serving the dish (line 4) is the last thing the memory questions depend on; the line is written
        # during the run, so its end is given as "the whole line".
        return 4, 10**9

    def gap_questions(self, example: TestExample) -> set[int] | None:
        return {5, 6}  # recalling the order and choosing from the menu: the memory questions

    async def _waiter(self, ctx: TestContext, restaurant: str, moment: str) -> str:
        """Small talk from the test LLM when the run has one (recorded and replayed), else nothing."""
        if not ctx.has_llm:
            return ""
        text = await ctx.llm([{"role": "user", "content": WAITER_PROMPT.format(restaurant=restaurant, moment=moment)}],
                             max_tokens=60)
        text = " ".join(text.split())
        return (text + " ") if text and "?" not in text and len(text) < 300 else ""

    async def run(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        menu: dict[str, list[str]] = example.extra["menu"]
        restaurant: str = example.extra["restaurant"]
        mains = menu["mains"]
        oracle = example.oracle_answers

        async def wait(k: int) -> None:
            await ctx.wait(percentage_finished=POINTS[k])

        await ctx.say(example.script[0])
        await wait(1)
        drink_reply = await ctx.ask(await self._waiter(ctx, restaurant, "the customer sits down") +
                                    example.script[1], oracle=oracle[0] if oracle else None)
        ordered_drink = story(menu, [drink_reply])[0]
        await wait(2)
        food_reply = await ctx.ask(f"Here is your {ordered_drink}. What would you like to eat?",
                                   oracle=oracle[1] if oracle else None)
        gone = story(menu, [drink_reply, food_reply])[1]  # the dish the agent chose runs out
        await wait(3)
        others = [m for m in mains if m != gone]
        change_reply = await ctx.ask(
            await self._waiter(ctx, restaurant, "you bring bad news from the kitchen") +
            f"I am so sorry, the kitchen has just run out of the {gone}. What would you like instead?",
            oracle=f"Then I'll have the {others[0]}, please." if oracle else None)
        served = story(menu, [drink_reply, food_reply, change_reply])[2]
        await wait(4)
        await ctx.say(await self._waiter(ctx, restaurant, "you serve the food") + f"Here is your {served}. Enjoy your meal!")
        await wait(5)
        await ctx.ask(example.script[5], oracle=f"I had the {ordered_drink} and the {served}." if oracle else None)
        await wait(6)
        await ctx.ask(example.script[6], oracle=oracle[4] if oracle else None)
        return await self.score(example, ctx)

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        menu: dict[str, list[str]] = example.extra["menu"]
        replies = list(responses) + [""] * (5 - len(responses))
        drink, gone, served = story(menu, replies)
        points: list[float] = []
        reasons: list[str] = []

        def mark(ok: bool, name: str, why: str) -> None:
            points.append(1.0 if ok else 0.0)
            reasons.append(f"{name}: {'yes' if ok else 'no'} - {why}")

        drinks = mentioned(replies[0], menu["drinks"])
        mark(bool(drinks), "drink", f"ordered {drinks[0]!r}" if drinks else "no drink from the menu was ordered")
        mains = mentioned(replies[1], menu["mains"])
        mark(bool(mains), "food", f"ordered {mains[0]!r}" if mains else "no main course from the menu was ordered")
        other = [m for m in mentioned(replies[2], menu["mains"]) if m != gone]
        mark(bool(other), "change", f"chose {other[0]!r} instead of {gone!r}" if other
             else f"no other main course than {gone!r} was chosen")
        has_drink = contains_phrase(replies[3], drink)
        has_food = contains_phrase(replies[3], served)
        mark(has_drink and has_food, "recall",
             f"named {'the drink ' + repr(drink) if has_drink else 'no drink served'} and "
             f"{'the dish ' + repr(served) if has_food else 'not the dish served (' + repr(served) + ')'}")
        desserts = mentioned(replies[4], menu["desserts"])
        mark(bool(desserts), "menu", f"ordered {desserts[0]!r}" if desserts else "no dessert from the menu was ordered")
        return sum(points), float(len(SUBSCORES)), reasons

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        score, max_score, reasons = self.evaluate_example(example, questions, responses)
        change_reply = responses[2] if len(responses) > 2 else ""
        if judge is None or reasons[2].startswith("change: yes") or not change_reply.strip():
            return TestOutcome(score, max_score, reasons)
        mains = example.extra["menu"]["mains"]
        gone = story(example.extra["menu"], list(responses))[1]
        verdict = await judge.grade(questions[2], f"one of {', '.join(m for m in mains if m != gone)}",
                                    change_reply, context=CHANGE_CONTEXT)
        reasons[2] += f"; judge {verdict.model}: {verdict.score:g} ({verdict.reason})"
        return TestOutcome(score + verdict.score, max_score, reasons, verdicts=[verdict])

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        raise NotImplementedError("restaurant is scored from its example (evaluate_example): the menu and what was served")
