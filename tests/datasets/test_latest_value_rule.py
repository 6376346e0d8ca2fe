"""The colours/names rule (`read_latest`) on answers that tell a history: what it decides and the reason it gives.

The corpus (test_latest_value_corpus.py) holds realistic answers by style; these are the readings one at a time, each
with the reason a user sees in the report: how the answer gives its value, timestamps, lists that run newest first,
denials, corrections, hedges, values of several words."""

from __future__ import annotations

import pytest

from ltm_harness._scoring.current_value import read_latest

STATED = ["Brown", "Cream", "Red"]


def read(reply: str, stated: list[str] = STATED, noun: str = "colour") -> tuple[float, bool, str]:
    v = read_latest(reply, stated[-1], stated, noun)
    return v.score, v.conclusive, v.reason


@pytest.mark.parametrize("reply, reason", [
    ("Red. Before that it was Cream.", "'Red' is the colour the answer gives (stated as the answer)."),
    ("Actually, it's Red. You said Cream before.", "'Red' is the colour the answer gives (stated as the answer)."),
    ("Brown, and now Red.", "'Red' is the colour the answer gives (marked as the current one)."),
    ("Brown, then Cream, and now Red.", "'Red' is the colour the answer gives (marked as the current one)."),
    ("Brown, then Cream, then Red.", "'Red' is the colour the answer gives (the end of the sequence it tells)."),
    ("Cream - or rather, Red.", "'Red' is the colour the answer gives (given as a correction)."),
    ("You said your favourite is Red, Cream, Brown.", "'Red' is the colour the answer gives (stated as the answer)."),
    ("Brown, Cream, Red.", "'Red' is the colour the answer gives (the last of the values stated)."),
    ("My favourite colour is Brown. My favourite colour is Red.",
     "'Red' is the colour the answer gives (the last of the values stated)."),
    ("You said brown and then red.", "'Red' is the colour the answer gives (the latest of the history it tells)."),
    ("- 2024-03-04: red\n- 2024-03-01: brown\n- 2024-03-02: cream",
     "'Red' is the colour the answer gives (the latest by its timestamps)."),
    ("Red, Cream, Brown (newest first).", "'Red' is the colour the answer gives (the first of the values stated, newest first)."),
    ("Your favourite colour is Cream; it was Red before.",
     "The answer gives 'Cream' as the colour (stated as the answer), not 'Red'."),
    ("Brown, then Red, then Cream.", "The answer gives 'Cream' as the colour (the end of the sequence it tells), not 'Red'."),
    ("Red.", "'Red' is the only colour in the answer."),
    ("I don't know.", "'Red' is not in the answer."),
    ("It isn't Red.", "The answer denies 'Red'."),
    ("Not Brown, and not Red.", "The answer denies every colour it names."),
    ("Red, or maybe Cream.", "The answer hedges between 'Red' and 'Cream'."),
    ("Cream, or maybe Red.", "The answer hedges between 'Red' and 'Cream'."),
    ("I remember brown, cream and red, but I'm not sure which one is current.", "The answer hedges between 'Red' and 'Brown'."),
])
def test_what_the_rule_decides_and_why(reply, reason):
    score, conclusive, got = read(reply)
    assert conclusive and got == reason
    assert score == (1.0 if reason.startswith(("'Red' is the colour", "'Red' is the only")) else 0.0)


@pytest.mark.parametrize("reply, reason", [
    ("Red. Most recently, though, you told me Cream.",
     "The answer gives both 'Red' (stated as the answer) and 'Cream' (marked as the current one) as the current colour."),
    ("Your favourite colour is Cream. Later you changed it to Red.",
     "The answer gives both 'Red' (the end of the sequence it tells) and 'Cream' (stated as the answer) as the current colour."),
    ("Brown... sorry, I mean Red and Cream.",  # a correction to two values
     "The answer gives both 'Red' (given as a correction) and 'Cream' (marked as the current one) as the current colour."),
    ("Red. You told me your favourite is Cream, though.",
     "The answer gives both 'Red' (stated as the answer) and 'Cream' (stated as the answer) as the current colour."),
    ("Your favourite colours are cream and red.",  # two in one statement, unlike statements one after another
     "The answer gives both 'Red' (stated as the answer) and 'Cream' (stated as the answer) as the current colour."),
    ("Right now you like brown, cream and red.",  # the cue before a list marks every item
     "The answer gives both 'Red' (marked as the current one) and 'Brown' (marked as the current one) as the current "
     "colour."),
    ("Your current favourites:\n- Cream (since March)\n- Red",  # an item with a note in brackets is still an item
     "The answer gives both 'Red' (marked as the current one) and 'Cream' (marked as the current one) as the current "
     "colour."),
])
def test_answers_giving_two_values_as_current_are_left_to_the_judge(reply, reason):
    assert read(reply) == (0.0, False, reason)


@pytest.mark.parametrize("reply, right", [
    ("You told me your name is Juliet. Now it's Delphine.", False),  # a report gives way to a value marked current
    ("Juliet. Before that you were Leonard, then Delphine.", True),
    ("You said Leonard, then Juliet. Hope that helps, Delphine!", True),  # a name in a sign-off is no answer
    ("Your name's Juliet, though you said Leonard and Delphine earlier.", True),
    ("Your name\u2019s Juliet, though you said Leonard and Delphine earlier.", True),  # a typographic apostrophe
    ("Your name's Juliet and you said Leonard and Delphine before.", True),  # "name's" states it
    ("Your name\u2019s Juliet and you said Leonard and Delphine before.", True),
    ("Delphine was what you told me. Juliet is the newest one.", True),
    ("Juliet came before Delphine and Leonard.", False),  # both later than Juliet: the list's last is the latest
    ("Delphine came before Leonard and Juliet.", True),
])
def test_names(reply, right):
    score, conclusive, _ = read(reply, ["Leonard", "Delphine", "Juliet"], "name")
    assert conclusive and score == float(right)


@pytest.mark.parametrize("reply, stated, right", [
    ("You went from brown to cream to red.", STATED, True),
    ("You went from brown to red to cream.", STATED, False),
    ("You said cream, and brown originally.", ["Brown", "Cream"], True),  # the first one named last
    ("At first cream and brown, then red.", ["Cream", "Brown", "Red"], True),  # the list shares "at first"
    ("You told me red, and cream before that.", STATED, True),
    ("You told me cream. Oh, and brown before that. And then red.", STATED, True),  # "then" opening a sentence
    ("You never stopped loving Red, even after Brown and Cream.", STATED, True),  # "never" does not reach "Red"
    ("It isn't Brown or Cream any more; it's Red.", STATED, True),
    ("Red is your favourite colour; Cream was before.", STATED, True),
    ("You said cream. Originally it was brown, then red.", ["Brown", "Red", "Cream"], True),  # a backstory
    ("You moved from brown and cream to red.", STATED, True),
    ("You told me red, not brown or cream.", STATED, True),  # the denial covers the list
    ("Red.\n\n- 2024-03-01: brown\n- 2024-03-02: cream", STATED, True),  # the answer, then a dated list
    ("I have red. Brown and cream were earlier.", STATED, True),
    ("Brown, then cream.\nRed, which is the latest one.", STATED, True),
    ("You told me red in your latest message\nBrown and cream were earlier.", STATED, True),
    ("Did you mean red? That's the last one you gave me (brown and cream came earlier).", STATED, True),
    ("- Red (latest)\n- Brown\n- Cream", STATED, True),  # a note on the first item is its own
    ("- Red, from your latest message\n- Brown\n- Cream", STATED, True),
    ("Red\nBrown and cream were the others.", STATED, True),  # a line is a list item only on its own
    ("Red\n\nBrown, then cream, were earlier.", STATED, True),
    ("On 2024-03-01 you said brown, and on March 5 red.", STATED, True),  # dates with and without a year: told order
    ("You said red and then brown. No wait, that was the first one.", ["Brown", "Red"], True),  # "that": brown
    ("You said red. That's the latest one (brown and cream came earlier).", STATED, True),
])
def test_orders_and_denials(reply, stated, right):
    score, conclusive, _ = read(reply, stated)
    assert conclusive and score == float(right)


@pytest.mark.parametrize("reply, right", [
    ("- 2024-03-03 09:15: red\n- 2024-03-02 11:40: cream\n- 2024-03-01 10:02: brown", True),
    ("- 2024-03-01 15:00: brown\n- 2024-03-02 09:00: red\n- 2024-03-01 18:00: cream", True),  # the day counts first
    ("brown (2 days ago), red (yesterday), cream (3 days ago)", True),
    ("brown (an hour ago), cream (10 minutes ago), red (two hours ago)", False),
    ("You said cream at 11:40 am, red at 1:15 pm and brown at 9:05 am.", True),
    ("You said red at 11:50 pm and brown at 12:10 am.", True),  # 12 am is the start of the day
    ("At 10:00:05 you said red, at 10:00:03 brown and at 10:00:04 cream.", True),
    ("On March 1 you said red, and on March 2 brown.", False),
    ("On 2 March you said brown, on 31 March red and on 30 March cream.", True),
    ("On Jan 30, 2024 you said cream; on Feb 29, 2024 red; on Feb 28, 2024 brown.", True),
    ("red (2 hours ago), brown (yesterday)", True),
    ("You said cream at 12:30 pm and red at 1:15 pm.", True),  # 12 pm is noon
    ("You said brown at 11:50 am and red at 12:10 pm.", True),
    ("On March 5, 2024 you said red; on 2024-03-01 brown.", True),  # two ways of writing a date with its year
    ("You said brown at 12:50 am and red at 1:05 am.", True),
    ("You said red at 13:30 and brown at 1:15 pm.", True),
    ("You said red at 10:45 and brown at 10:15.", True),  # the minutes count
    ("On March 3, 2024 you said red; on March 5, 2023 brown.", True),  # the year counts
    ("On 5 November you said brown, on 3 December red.", True),
    ("On March 3 at 10:00 you said brown, on March 3 at 11:30 red.", True),
    ("- 2024-02-31: red\n- 2024-02-28: brown", True),  # a day past the month's end is its last
    ("2024-03-04 red\n2024-03-01 brown\n2024-03-02 cream", True),  # lines that open on their date
])
def test_timestamps_order_the_history(reply, right):
    score, conclusive, reason = read(reply)
    assert conclusive and score == float(right) and "(the latest by its timestamps)" in reason


@pytest.mark.parametrize("reply", [
    "- 10:05 red\n- 2024-03-01 brown\n- 2024-03-02 cream",  # a time and dates: not comparable
    "At 10:00 you said red, at 10:00 brown, and at 10:00 cream.",  # all the same
    "At 10:05 red, then cream, and at 09:00 brown.",  # one without a timestamp
])
def test_timestamps_that_cannot_order_the_values_are_not_used(reply):
    score, conclusive, reason = read(reply)
    assert conclusive and "timestamps" not in reason and score == 0.0


def test_one_value_without_a_timestamp_leaves_the_order_told():
    assert read("brown (2 days ago), cream, red (3 days ago)")[:2] == (1.0, True)


def test_values_of_several_words():
    assert read_latest("Red Orange now; it used to be Red.", "Red Orange", ["Red", "Red Orange"], "colour").score == 1.0
    assert read_latest("Red now; it used to be Red Orange.", "Red Orange", ["Red", "Red Orange"], "colour").score == 0.0
    assert read_latest("dark  RED, after navy blue", "Dark Red", ["Navy Blue", "Dark Red"], "colour").score == 1.0
    assert read_latest("Red Orange now; it used to be red.", "Red Orange", ["red", "Red Orange"], "colour").score == 1.0


@pytest.mark.parametrize("reply, stated, reason", [
    ("I don't have a record of your favourite colour. Popular favourites are blue, red, green and purple.", STATED,
     "The answer names 'Red' but only as an example of what people like, not as one it remembers."),
    ("Common favourite colours include blue, red, green and purple.", ["Blue", "Green", "Purple"],
     "The answer names 'Purple' but only as an example of what people like, not as one it remembers."),
    ("You haven't told me your favourite colour, but red is a lovely one.", STATED,
     "The answer names 'Red' but says it has no memory of it."),
    ("Your favourite colour is a shade of red, and you also mentioned cream and brown.", STATED,
     "The answer names 'Red' but only approximately."),
    ("Your favourite colour is a shade of red, and you also mentioned cream and brown.", ["Cream", "Red", "Brown"],
     "The answer names 'Brown' but gives no colour as the current one and recalls the others in no order."),
    ("Initially red; later alternative descriptions: cream and brown.", STATED,
     "The answer names 'Red' but gives the values as alternatives of one another, not as changes."),
    ("Initially brown; later alternative descriptions: cream and red.", STATED,
     "The answer names 'Red' but gives the values as alternatives of one another, not as changes."),
])
def test_what_the_rule_cannot_read_with_certainty_is_left_to_the_judge(reply, stated, reason):
    assert read(reply, stated) == (0.0, False, reason)


@pytest.mark.parametrize("reply, score", [
    ("Your favourite colour is Red. It's one of the most popular colours, too.", 1.0),  # the example is another sentence
    ("Red, and you also mentioned cream and brown.", 1.0),  # the value opens the answer
    ("Green was your favourite at the very start, but after you said blue you settled on red.", 1.0),
    ("Your favourite colour is Cream. Red is popular, but you never chose it.", 0.0),
])
def test_certain_answers_near_those_classes_are_still_decided(reply, score):
    got, conclusive, _ = read(reply, ["Green", "Blue", "Red"] if "Green" in reply else STATED)
    assert conclusive and got == score
