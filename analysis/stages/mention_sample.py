# ruff: noqa: E501  (the hand-checked cases are kept one sentence per line, as written)
"""A small hand-checked sample for calibrating the explicit-mention detector.

Every sentence here was written by this project for this purpose (none comes from the study's
or anyone's real data). Each case is an attribute, a response excerpt, and whether the excerpt
*explicitly* mentions the attribute, i.e. refers to the person's trait outright ("Since you
keep bees, ..."), as opposed to tailoring silently or merely sharing the topic. The label was
decided by reading each case; the hard cases (topic overlap without reference to the person,
paraphrased mentions) are deliberate. The first half (``CALIBRATION``) chose the thresholds in
``config/stages/default.yaml``; the second half (``CHECK``) was not looked at while choosing
them and gives the accuracy the workflow reports.
"""

from __future__ import annotations

from typing import NamedTuple


class MentionCase(NamedTuple):
    attribute: str
    response: str
    mentioned: bool


CALIBRATION: tuple[MentionCase, ...] = (
    MentionCase(
        "The user keeps bees in their backyard.",
        "Since you keep bees in your backyard, plant lavender near the hives. Water the beds early.",
        True,
    ),
    MentionCase(
        "The user keeps bees in their backyard.",
        "If you want more pollinators, plant lavender and thyme. You should water them early in the morning.",
        False,
    ),
    MentionCase(
        "The user is vegetarian.",
        "Here is a hearty chili. As a vegetarian, you can swap the beef for black beans and lentils.",
        True,
    ),
    MentionCase(
        "The user is vegetarian.",
        "You can make this chili with lentils and black beans. Saute the onions first, then simmer for forty minutes.",
        False,
    ),
    MentionCase(
        "The user works night shifts as a nurse.",
        "Because you work nights as a nurse, keep your bedroom dark and cool during the day.",
        True,
    ),
    MentionCase(
        "The user works night shifts as a nurse.",
        "You will sleep better in a dark, cool room. If your shifts change, keep a regular schedule anyway.",
        False,
    ),
    MentionCase(
        "The user is learning Spanish.",
        "Given that you are learning Spanish, try labelling objects at home with their Spanish names.",
        True,
    ),
    MentionCase(
        "The user is learning Spanish.",
        "You can label objects at home with sticky notes. Spanish is spoken in over twenty countries.",
        False,
    ),
    MentionCase(
        "The user has two young children.",
        "With two little kids at home, you might prefer a car with sliding rear doors.",
        True,
    ),
    MentionCase(
        "The user has two young children.",
        "You might like a compact SUV: good fuel economy, a roomy boot and strong safety ratings for children.",
        False,
    ),
    MentionCase(
        "The user plays the guitar.",
        "You could write the melody on your guitar first and then add lyrics that fit its rhythm.",
        True,
    ),
    MentionCase(
        "The user plays the guitar.",
        "You could start with a chord progression and hum a melody over it, then add lyrics.",
        False,
    ),
    MentionCase(
        "The user is training for a marathon.",
        "Since you're training for a marathon, eat more carbohydrates in the days before long runs.",
        True,
    ),
    MentionCase(
        "The user is training for a marathon.",
        "You should eat vegetables, whole grains and lean protein. Drink enough water when you exercise.",
        False,
    ),
    MentionCase(
        "The user lives in a small apartment.",
        "For a small apartment like yours, a foldable desk and wall shelves save a lot of space.",
        True,
    ),
    MentionCase(
        "The user lives in a small apartment.",
        "You can save space with wall shelves and foldable furniture. Measure your room before buying.",
        False,
    ),
    MentionCase(
        "The user is a high school teacher.",
        "As a teacher, you can use this exercise with your students at the start of a lesson.",
        True,
    ),
    MentionCase(
        "The user is a high school teacher.",
        "You can start with a short warm-up exercise. Students respond well to clear, simple tasks.",
        False,
    ),
    MentionCase(
        "The user is allergic to peanuts.",
        "You can make the sauce with sunflower butter so that it is safe with your peanut allergy.",
        True,
    ),
    MentionCase(
        "The user is allergic to peanuts.",
        "The sauce combines soy, lime, garlic and peanut butter. You can adjust the heat with chili.",
        False,
    ),
)

CHECK: tuple[MentionCase, ...] = (
    MentionCase(
        "The user owns a dog.",
        "Since you have a dog, pick a pet-safe ground cover instead of cocoa mulch.",
        True,
    ),
    MentionCase(
        "The user owns a dog.",
        "You can use clover as a ground cover; it stays green with little care, even where dogs play.",
        False,
    ),
    MentionCase(
        "The user is a beginner photographer.",
        "As someone just starting out with photography, you should shoot in aperture priority mode first.",
        True,
    ),
    MentionCase(
        "The user is a beginner photographer.",
        "You can shoot in aperture priority mode and let the camera pick the shutter speed.",
        False,
    ),
    MentionCase(
        "The user enjoys hiking in the mountains.",
        "Because you like hiking in the mountains, a lightweight rain shell is worth the money.",
        True,
    ),
    MentionCase(
        "The user enjoys hiking in the mountains.",
        "You will want a lightweight rain shell for mountain weather. Look for taped seams.",
        False,
    ),
    MentionCase(
        "The user is studying computer science.",
        "For your computer science courses, a laptop with sixteen gigabytes of memory will be enough.",
        True,
    ),
    MentionCase(
        "The user is studying computer science.",
        "You will be fine with sixteen gigabytes of memory for programming. Battery life matters too.",
        False,
    ),
    MentionCase(
        "The user is on a tight budget.",
        "Since money is tight for you right now, start with the free tier and upgrade later.",
        True,
    ),
    MentionCase(
        "The user is on a tight budget.",
        "You can start on the free tier, which includes most features. Paid plans add storage.",
        False,
    ),
    MentionCase(
        "The user has a vegetable garden.",
        "You can use the compost on your vegetable garden once it is dark and crumbly.",
        True,
    ),
    MentionCase(
        "The user has a vegetable garden.",
        "Your compost is ready when it is dark and crumbly. You should turn the pile every week or two.",
        False,
    ),
    MentionCase(
        "The user recently moved to Canada.",
        "Now that you've moved to Canada, you will need a provincial health card before your first visit.",
        True,
    ),
    MentionCase(
        "The user recently moved to Canada.",
        "Health cards are issued by each province in Canada. Bring proof of residence when you apply.",
        False,
    ),
    MentionCase(
        "The user practices yoga every morning.",
        "Your morning yoga practice already builds flexibility, so add two strength sessions a week.",
        True,
    ),
    MentionCase(
        "The user practices yoga every morning.",
        "You can add strength training twice a week to complement stretching. Rest days help you recover.",
        False,
    ),
    MentionCase(
        "The user is a software engineer.",
        "As an engineer you will appreciate that the tool has a command line interface and an API.",
        True,
    ),
    MentionCase(
        "The user is a software engineer.",
        "You can use the tool from the command line or through its API. Its documentation is thorough.",
        False,
    ),
    MentionCase(
        "The user cares about the environment.",
        "Given how much you care about the environment, the train is the better choice for this trip.",
        True,
    ),
    MentionCase(
        "The user cares about the environment.",
        "You will spend four hours on the train and one in the air; the train emits far less carbon.",
        False,
    ),
)
