"""Every sentence of the bundled world: project-written templates and phrase banks.

Nothing here comes from the study's data or paper. The banks are organised by *domain*
(cooking, travel, ...), because the domain is what links the three stages: a conversation
about a domain yields attributes in it, a prompt belongs to one, and whether an attribute
matters for a prompt depends on how their domains relate. Text carries the same signals the
real data carries, so the project's real models (BM25, MiniLM, trained classifiers, mention
detection) have something to find:

* stage 1: supported attributes cite repeated first-person evidence; overgeneralizations
  cite one request; task-context confusions cite a writing task done *for someone else*;
  speculative ones hedge ("may", "might").
* stage 2: an attribute and a prompt of the same domain share vocabulary.
* stage 3: an explicit mention is a second-person sentence that repeats the attribute's own
  words ("Since you bake sourdough bread at home, ..."); an implicit adaptation never does.

All choices are made by the caller's seeded ``numpy.random.Generator``; this module holds
no state and no randomness of its own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Claim:
    """Something an attribute can say about a user, in the forms the templates need.

    ``third`` follows "The user ..."; ``second`` follows "you ..." (and, with "are" turned
    into "am", "I ..."); ``noun`` names the topic for "interested in ..." phrasings.
    """

    noun: str
    third: str
    second: str


@dataclass(frozen=True)
class Request:
    """A one-off request and the claim an over-eager extractor draws from it."""

    text: str
    claim: Claim


@dataclass(frozen=True)
class Domain:
    """One area of life: its interests, misleading requests, prompts and advice."""

    name: str
    interests: tuple[Claim, ...]
    #: single requests that an extractor overgeneralizes into a claim about the user
    one_offs: tuple[Request, ...]
    #: writing tasks done for someone else (or fiction) that an extractor confuses with the user
    role_tasks: tuple[Request, ...]
    prompts: tuple[str, ...]
    #: generic advice sentences for a prompt of this domain
    tips: tuple[str, ...]
    #: second-person clauses that tailor any answer towards this domain (no attribute words)
    bridges: tuple[str, ...]


def _c(noun: str, third: str, second: str) -> Claim:
    return Claim(noun, third, second)


def _r(text: str, noun: str, third: str, second: str) -> Request:
    return Request(text, Claim(noun, third, second))


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "cooking",
        (
            _c("sourdough baking", "bakes sourdough bread at home", "bake sourdough bread at home"),
            _c(
                "vegetarian cooking",
                "cooks mostly vegetarian meals",
                "cook mostly vegetarian meals",
            ),
            _c(
                "meal prepping",
                "prepares a week of lunches every Sunday",
                "prepare a week of lunches every Sunday",
            ),
            _c("spicy food", "loves cooking fiery chili dishes", "love cooking fiery chili dishes"),
        ),
        (
            _r(
                "Can you give me a recipe for banana bread?",
                "home baking",
                "is an avid home baker",
                "are an avid home baker",
            ),
            _r(
                "How long should I boil an egg for a runny yolk?",
                "gourmet cooking",
                "is passionate about gourmet cooking",
                "are passionate about gourmet cooking",
            ),
            _r(
                "What can I use instead of buttermilk in pancakes?",
                "weekend brunches",
                "hosts elaborate brunches every weekend",
                "host elaborate brunches every weekend",
            ),
        ),
        (
            _r(
                "Write a menu blurb for a chef who runs a tiny Italian trattoria.",
                "running a restaurant",
                "runs a small Italian restaurant",
                "run a small Italian restaurant",
            ),
            _r(
                "Draft a bio for a caterer with ten years of wedding work behind her.",
                "catering",
                "has ten years of catering experience",
                "have ten years of catering experience",
            ),
        ),
        (
            "What are some easy weeknight dinners that keep well as leftovers?",
            "How can I make homemade soup taste richer?",
            "What should a beginner always keep in the pantry?",
        ),
        (
            "Cook a big batch of one grain early in the week and reuse it in several meals.",
            "Season in layers: a little salt early, then taste and adjust at the end.",
            "Keep two or three sauces on hand so simple ingredients feel new.",
            "Roast vegetables at high heat so they brown instead of steaming.",
            "Label leftovers with the date so nothing gets forgotten.",
            "Choose recipes that share ingredients to cut down on waste.",
        ),
        (
            "it may help to fit this around your time in the kitchen",
            "you could treat this like planning a menu, one small step at a time",
        ),
    ),
    Domain(
        "fitness",
        (
            _c(
                "half marathon training",
                "is training for a half marathon",
                "are training for a half marathon",
            ),
            _c(
                "strength training",
                "lifts weights three times a week",
                "lift weights three times a week",
            ),
            _c("yoga", "practices yoga most mornings", "practice yoga most mornings"),
            _c("cycling", "commutes to work by bike", "commute to work by bike"),
        ),
        (
            _r(
                "How many calories does a half-hour walk burn?",
                "weight loss",
                "is trying to lose weight",
                "are trying to lose weight",
            ),
            _r(
                "Which muscles do push-ups work?",
                "bodybuilding",
                "is a dedicated bodybuilder",
                "are a dedicated bodybuilder",
            ),
            _r(
                "Is it bad to stretch before running?",
                "competitive running",
                "is a competitive runner",
                "are a competitive runner",
            ),
        ),
        (
            _r(
                "Write a caption for a personal trainer celebrating five years of her gym.",
                "gym ownership",
                "owns a gym",
                "own a gym",
            ),
            _r(
                "Make a workout plan for a character in my novel, a retired boxer.",
                "boxing",
                "is a retired boxer",
                "are a retired boxer",
            ),
        ),
        (
            "How do I start exercising again after a long break?",
            "What is a good way to warm up before a workout?",
            "How can I stay motivated to work out during winter?",
        ),
        (
            "Start with two or three short sessions a week and build from there.",
            "Warm up for five to ten minutes with light movement before harder efforts.",
            "Track one simple number, like minutes moved, so progress is visible.",
            "Put workouts in your calendar like appointments so they are harder to skip.",
            "Alternate easy days with harder days to give the body time to recover.",
            "Pick an activity you enjoy; consistency matters more than intensity.",
        ),
        (
            "you could schedule this the way you would schedule a training session",
            "it may help to pair this with the movement you already do each week",
        ),
    ),
    Domain(
        "travel",
        (
            _c("budget backpacking", "backpacks on a tight budget", "backpack on a tight budget"),
            _c(
                "train travel",
                "prefers crossing Europe by train",
                "prefer crossing Europe by train",
            ),
            _c(
                "camping",
                "goes camping with friends every summer",
                "go camping with friends every summer",
            ),
            _c(
                "a trip to Japan",
                "is planning a first trip to Japan",
                "are planning a first trip to Japan",
            ),
        ),
        (
            _r(
                "What's the time difference between Lisbon and Chicago?",
                "transatlantic travel",
                "travels often between Portugal and the United States",
                "travel often between Portugal and the United States",
            ),
            _r(
                "What currency do they use in Iceland?",
                "moving abroad",
                "is planning to move to Iceland",
                "are planning to move to Iceland",
            ),
            _r(
                "How early should I get to the airport for an international flight?",
                "frequent flying",
                "is a frequent flyer",
                "are a frequent flyer",
            ),
        ),
        (
            _r(
                "Write a blog intro for a guide who has led hikes in Patagonia for twelve years.",
                "guiding hikes",
                "has led hikes in Patagonia for twelve years",
                "have led hikes in Patagonia for twelve years",
            ),
            _r(
                "Draft an apology from a hotel manager to a guest about a noisy room.",
                "hotel management",
                "manages a hotel",
                "manage a hotel",
            ),
        ),
        (
            "How do I pack light for a two-week trip?",
            "What are some tips for dealing with jet lag?",
            "How can I find affordable places to stay when traveling?",
        ),
        (
            "Lay everything out first, then put a third of it back.",
            "Shift your sleep schedule by an hour a day before a long flight.",
            "Book refundable options early and watch prices as the date gets closer.",
            "Keep copies of documents in your email and on paper.",
            "Choose one bag that fits under the seat for the essentials.",
            "Walk outside in daylight on arrival to help your body adjust.",
        ),
        (
            "you could plan this the way you would plan a trip, with a short checklist",
            "it may help to build this around the places you like to visit",
        ),
    ),
    Domain(
        "finance",
        (
            _c(
                "saving for a home",
                "is saving for a down payment on a house",
                "are saving for a down payment on a house",
            ),
            _c(
                "index fund investing",
                "invests in low-cost index funds",
                "invest in low-cost index funds",
            ),
            _c(
                "expense tracking",
                "tracks every expense in a budgeting app",
                "track every expense in a budgeting app",
            ),
            _c("student loans", "is paying off student loans", "are paying off student loans"),
        ),
        (
            _r(
                "What does APR stand for?",
                "a large loan",
                "is taking out a large loan",
                "are taking out a large loan",
            ),
            _r(
                "How is compound interest calculated?",
                "investing",
                "is an experienced investor",
                "are an experienced investor",
            ),
            _r(
                "What's the difference between a Roth and a traditional IRA?",
                "retirement",
                "is close to retirement",
                "are close to retirement",
            ),
        ),
        (
            _r(
                "Write a post for a financial planner who just passed her certification exam.",
                "financial planning",
                "is a certified financial planner",
                "are a certified financial planner",
            ),
            _r(
                "Draft a letter from a bakery owner asking the bank to extend a loan.",
                "a business loan",
                "owns a bakery with an outstanding bank loan",
                "own a bakery with an outstanding bank loan",
            ),
        ),
        (
            "How do I make a monthly budget I can actually stick to?",
            "What is the best way to build an emergency fund?",
            "Should I pay off debt or save first?",
        ),
        (
            "Write down fixed costs first, then decide what is left for everything else.",
            "Automate a small transfer to savings on payday.",
            "Keep three to six months of essential costs as a cushion.",
            "Pay the highest-interest balance first while making minimum payments on the rest.",
            "Review subscriptions every few months and cancel the ones you forgot about.",
            "Give every spending category a realistic limit, not an ideal one.",
        ),
        (
            "you could run the numbers for this the same way you plan your money",
            "it may help to set this up as a small monthly goal",
        ),
    ),
    Domain(
        "programming",
        (
            _c(
                "Python scripting",
                "writes Python scripts to automate work tasks",
                "write Python scripts to automate work tasks",
            ),
            _c(
                "building websites",
                "is building a personal website with JavaScript",
                "are building a personal website with JavaScript",
            ),
            _c("SQL", "is learning SQL for data analysis", "are learning SQL for data analysis"),
            _c(
                "open-source software",
                "contributes to open-source projects",
                "contribute to open-source projects",
            ),
        ),
        (
            _r(
                "What does a 404 error mean?",
                "web development",
                "is a professional web developer",
                "are a professional web developer",
            ),
            _r(
                "How do I reverse a list in Python?",
                "Python development",
                "is a senior Python developer",
                "are a senior Python developer",
            ),
            _r(
                "What's the shortcut to comment out lines in VS Code?",
                "software engineering",
                "is a software engineer",
                "are a software engineer",
            ),
        ),
        (
            _r(
                "Write a job ad for a backend engineer at a fintech startup.",
                "backend engineering",
                "is a backend engineer at a fintech startup",
                "are a backend engineer at a fintech startup",
            ),
            _r(
                "Write a resignation letter for a data scientist leaving a bank after six years.",
                "data science",
                "is a data scientist at a bank",
                "are a data scientist at a bank",
            ),
        ),
        (
            "How should I structure a small Python project?",
            "What is the best way to learn a new programming language?",
            "How do I write good commit messages?",
        ),
        (
            "Keep one folder for source code and one for tests from the start.",
            "Write a short README that says how to run the thing.",
            "Build something small and finished before something big and ambitious.",
            "Use version control even for tiny experiments.",
            "Read other people's code in the language you are learning.",
            "Describe what changed and why in one clear line.",
        ),
        (
            "you could approach this like a small coding project, one piece at a time",
            "it may help to automate the boring parts of this",
        ),
    ),
    Domain(
        "gardening",
        (
            _c("growing tomatoes", "grows tomatoes on a balcony", "grow tomatoes on a balcony"),
            _c(
                "houseplants",
                "keeps a large collection of houseplants",
                "keep a large collection of houseplants",
            ),
            _c(
                "composting",
                "composts kitchen scraps in the backyard",
                "compost kitchen scraps in the backyard",
            ),
            _c(
                "native wildflowers",
                "is replacing the lawn with native wildflowers",
                "are replacing the lawn with native wildflowers",
            ),
        ),
        (
            _r(
                "Why are the leaves on my basil turning yellow?",
                "gardening expertise",
                "is an experienced gardener",
                "are an experienced gardener",
            ),
            _r(
                "When do tulips usually bloom?",
                "selling flowers",
                "sells flowers at a market",
                "sell flowers at a market",
            ),
            _r(
                "Is lavender safe for cats?",
                "lavender farming",
                "grows lavender commercially",
                "grow lavender commercially",
            ),
        ),
        (
            _r(
                "Write a product description for a nursery owner selling rare orchids.",
                "a plant nursery",
                "owns a plant nursery",
                "own a plant nursery",
            ),
            _r(
                "Draft a speech for a community garden president thanking volunteers.",
                "a community garden",
                "is president of a community garden",
                "are president of a community garden",
            ),
        ),
        (
            "How do I keep indoor plants alive in a dark apartment?",
            "Which vegetables are easiest to grow for a beginner?",
            "How often should I water a new garden bed?",
        ),
        (
            "Water deeply and less often so roots grow down.",
            "Start with a few forgiving plants before adding fussy ones.",
            "Check the soil with a finger before watering.",
            "Group plants with similar light needs together.",
            "Mulch bare soil to hold moisture and keep weeds down.",
            "Keep a simple log of what you planted and when.",
        ),
        (
            "you could treat this like tending a plant: small, regular attention",
            "it may help to do this outdoors or near something green",
        ),
    ),
    Domain(
        "music",
        (
            _c("guitar", "is learning to play the guitar", "are learning to play the guitar"),
            _c("jazz", "listens to a lot of jazz", "listen to a lot of jazz"),
            _c("choir singing", "sings in a community choir", "sing in a community choir"),
            _c(
                "music production",
                "produces electronic music in a home studio",
                "produce electronic music in a home studio",
            ),
        ),
        (
            _r(
                "Who first recorded the song 'Blue Harbor Nights'?",
                "jazz performance",
                "is a jazz musician",
                "are a jazz musician",
            ),
            _r(
                "What key has two sharps?",
                "music theory",
                "is a trained music theorist",
                "are a trained music theorist",
            ),
            _r(
                "How do you say 'happy birthday' in a song in Spanish?",
                "singing",
                "is a professional singer",
                "are a professional singer",
            ),
        ),
        (
            _r(
                "Write a press release for a violinist announcing a European tour.",
                "touring",
                "is a touring violinist",
                "are a touring violinist",
            ),
            _r(
                "Write song lyrics from the view of a lonely lighthouse keeper.",
                "lighthouse keeping",
                "is a lighthouse keeper",
                "are a lighthouse keeper",
            ),
        ),
        (
            "How can I practice an instrument well when I have little time?",
            "What is a good way to discover new music?",
            "How do I get over stage fright before a performance?",
        ),
        (
            "Practice in short daily sessions rather than one long one a week.",
            "Slow a hard passage down until you can play it cleanly.",
            "Record yourself now and then to hear what has improved.",
            "Follow one artist's influences back a generation.",
            "Breathe slowly and focus on the first few notes, not the whole piece.",
            "Perform for one friend before performing for a room.",
        ),
        (
            "you could practice this the way you would practice a piece of music",
            "it may help to put on some music you like while you do this",
        ),
    ),
    Domain(
        "parenting",
        (
            _c(
                "toddler sleep",
                "has a toddler who struggles to sleep",
                "have a toddler who struggles to sleep",
            ),
            _c("homeschooling", "homeschools two children", "homeschool two children"),
            _c("raising a teenager", "is raising a teenage son", "are raising a teenage son"),
            _c(
                "family outings",
                "plans weekend outings with young kids",
                "plan weekend outings with young kids",
            ),
        ),
        (
            _r(
                "At what age do babies usually start walking?",
                "a newborn",
                "is a new parent",
                "are a new parent",
            ),
            _r(
                "Give me ideas for a seven-year-old's birthday party.",
                "a seven-year-old",
                "has a seven-year-old child",
                "have a seven-year-old child",
            ),
            _r(
                "How much screen time is recommended for kids?",
                "strict parenting",
                "is a strict parent",
                "are a strict parent",
            ),
        ),
        (
            _r(
                "Write a note from a kindergarten teacher to parents about a field trip.",
                "teaching kindergarten",
                "is a kindergarten teacher",
                "are a kindergarten teacher",
            ),
            _r(
                "Write a story narrated by a single father of triplets.",
                "triplets",
                "is a single father of triplets",
                "are a single father of triplets",
            ),
        ),
        (
            "How can I help a child build a reading habit?",
            "What are good ways to handle a toddler's tantrums?",
            "How do I balance work and family time?",
        ),
        (
            "Keep a predictable routine; children cope better when they know what comes next.",
            "Offer two acceptable choices instead of an open question.",
            "Make reading a shared, cosy moment rather than a chore.",
            "Protect one small block of family time each day.",
            "Name the feeling before addressing the behaviour.",
            "Lower the bar on perfect and aim for consistent.",
        ),
        (
            "you could make this a family activity",
            "it may help to fit this into your household routine",
        ),
    ),
    Domain(
        "languages",
        (
            _c(
                "Spanish",
                "is learning Spanish before a move to Madrid",
                "are learning Spanish before a move to Madrid",
            ),
            _c(
                "Japanese kanji",
                "studies Japanese kanji every day",
                "study Japanese kanji every day",
            ),
            _c(
                "language exchanges",
                "joins a weekly language exchange",
                "join a weekly language exchange",
            ),
            _c(
                "German exams",
                "is preparing for a German language exam",
                "are preparing for a German language exam",
            ),
        ),
        (
            _r(
                "How do you say 'where is the library' in Italian?",
                "Italian",
                "is learning Italian",
                "are learning Italian",
            ),
            _r(
                "Translate 'happy anniversary' into Korean.",
                "Korean",
                "is studying Korean",
                "are studying Korean",
            ),
            _r(
                "What does 'c'est la vie' mean?",
                "French",
                "speaks French fluently",
                "speak French fluently",
            ),
        ),
        (
            _r(
                "Write a cover letter for an interpreter who speaks five languages.",
                "interpreting",
                "speaks five languages",
                "speak five languages",
            ),
            _r(
                "Write a dialogue between two exchange students who just arrived in Seoul.",
                "studying in Seoul",
                "is an exchange student in Seoul",
                "are an exchange student in Seoul",
            ),
        ),
        (
            "What is the most effective way to learn vocabulary?",
            "How can I practice speaking a new language without a partner?",
            "How long does it take to become conversational in a language?",
        ),
        (
            "Review words with spaced repetition instead of long lists.",
            "Learn phrases in context, not isolated words.",
            "Talk to yourself out loud about what you are doing.",
            "Shadow short audio clips, repeating right after the speaker.",
            "Set a daily minimum so small that you never skip it.",
            "Switch your phone to the language for a week.",
        ),
        (
            "you could practice this in the language you are working on",
            "it may help to treat this like learning vocabulary, a little each day",
        ),
    ),
    Domain(
        "pets",
        (
            _c("dog training", "is training a rescue dog", "are training a rescue dog"),
            _c("cats", "has two indoor cats", "have two indoor cats"),
            _c("aquariums", "keeps a freshwater aquarium", "keep a freshwater aquarium"),
            _c("backyard chickens", "raises backyard chickens", "raise backyard chickens"),
        ),
        (
            _r("Can dogs eat grapes?", "dog ownership", "owns several dogs", "own several dogs"),
            _r(
                "How long do hamsters live?",
                "breeding hamsters",
                "breeds hamsters",
                "breed hamsters",
            ),
            _r("Why do cats purr?", "breeding cats", "is a cat breeder", "are a cat breeder"),
        ),
        (
            _r(
                "Write an ad for a shelter manager looking for foster homes.",
                "shelter management",
                "manages an animal shelter",
                "manage an animal shelter",
            ),
            _r(
                "Write a bio for a groomer who has worked with show dogs for fifteen years.",
                "grooming",
                "has groomed show dogs for fifteen years",
                "have groomed show dogs for fifteen years",
            ),
        ),
        (
            "How do I get a new pet used to my home?",
            "What should I know before adopting an animal?",
            "How can I keep a pet entertained while I'm at work?",
        ),
        (
            "Give a new animal one quiet room to start with.",
            "Keep feeding and walking times the same every day.",
            "Reward the behaviour you want right away.",
            "Budget for vet visits before you adopt, not after.",
            "Rotate toys so they stay interesting.",
            "Watch for stress signals and slow down when you see them.",
        ),
        (
            "you could plan this around the time you spend with your animals",
            "it may help to build this into the daily routine your pets already know",
        ),
    ),
    Domain(
        "photography",
        (
            _c(
                "film photography",
                "shoots with an old film camera",
                "shoot with an old film camera",
            ),
            _c("bird photography", "photographs birds on weekends", "photograph birds on weekends"),
            _c("photo editing", "edits photos in Lightroom", "edit photos in Lightroom"),
            _c(
                "portraits",
                "takes portraits of friends for fun",
                "take portraits of friends for fun",
            ),
        ),
        (
            _r(
                "What does aperture mean on a camera?",
                "professional photography",
                "is a professional photographer",
                "are a professional photographer",
            ),
            _r(
                "How do I remove red-eye from a picture?",
                "retouching",
                "is a professional photo retoucher",
                "are a professional photo retoucher",
            ),
            _r(
                "What's a good camera for beginners?",
                "a photography business",
                "is starting a photography business",
                "are starting a photography business",
            ),
        ),
        (
            _r(
                "Write an artist statement for a photographer showing street photos of Cairo.",
                "exhibiting",
                "is exhibiting street photography of Cairo",
                "are exhibiting street photography of Cairo",
            ),
            _r(
                "Summarize a contract for a wedding photographer's clients.",
                "wedding photography",
                "is a wedding photographer",
                "are a wedding photographer",
            ),
        ),
        (
            "How can I take better pictures with my phone?",
            "What makes a photograph well composed?",
            "How do I organize thousands of digital pictures?",
        ),
        (
            "Turn on the grid and put the subject on one of the lines.",
            "Shoot near sunrise or sunset for softer light.",
            "Clean the lens before you start; it matters more than you think.",
            "Sort pictures into folders by year and event right after import.",
            "Delete near-duplicates the same day you shoot.",
            "Get closer before you reach for zoom.",
        ),
        (
            "you could frame this the way you would frame a shot",
            "it may help to keep a visual record of this as you go",
        ),
    ),
    Domain(
        "home",
        (
            _c(
                "renovating an old house",
                "is renovating an old farmhouse",
                "are renovating an old farmhouse",
            ),
            _c(
                "woodworking",
                "builds furniture in a garage workshop",
                "build furniture in a garage workshop",
            ),
            _c(
                "interior design",
                "enjoys redecorating the apartment",
                "enjoy redecorating the apartment",
            ),
            _c(
                "energy efficiency",
                "is insulating the attic to cut heating bills",
                "are insulating the attic to cut heating bills",
            ),
        ),
        (
            _r(
                "How do I unclog a drain without chemicals?",
                "plumbing",
                "is a plumber",
                "are a plumber",
            ),
            _r(
                "Which paint finish is best for a bathroom?",
                "a bathroom remodel",
                "is remodeling the bathroom",
                "are remodeling the bathroom",
            ),
            _r(
                "How do I find a stud in a wall?",
                "carpentry",
                "is an experienced carpenter",
                "are an experienced carpenter",
            ),
        ),
        (
            _r(
                "Write a listing for an agent selling a three-bedroom house by a lake.",
                "selling a house",
                "is selling a house by a lake",
                "are selling a house by a lake",
            ),
            _r(
                "Write an ad for a contractor who specializes in kitchen remodels.",
                "contracting",
                "is a contractor who remodels kitchens",
                "are a contractor who remodels kitchens",
            ),
        ),
        (
            "How do I make a small apartment feel bigger?",
            "What tools should every homeowner have?",
            "How can I lower my heating bill this winter?",
        ),
        (
            "Use mirrors and light colours to bounce light around.",
            "Keep a tape measure, a level and a good screwdriver set together.",
            "Seal drafts around windows and doors first; it is cheap and fast.",
            "Choose furniture that lifts off the floor on legs.",
            "Lower the thermostat by a degree or two at night.",
            "Fix small problems before they become big ones.",
        ),
        (
            "you could tackle this like a small project around the house",
            "it may help to set aside a corner of your home for this",
        ),
    ),
    Domain(
        "career",
        (
            _c(
                "a career change",
                "is moving from teaching into UX design",
                "are moving from teaching into UX design",
            ),
            _c(
                "job interviews",
                "is preparing for job interviews",
                "are preparing for job interviews",
            ),
            _c(
                "remote work",
                "works remotely for a software company",
                "work remotely for a software company",
            ),
            _c(
                "managing a team",
                "recently became a team manager",
                "recently became a team manager",
            ),
        ),
        (
            _r(
                "What does 'synergy' mean in business?",
                "corporate management",
                "works in corporate management",
                "work in corporate management",
            ),
            _r(
                "How long should a resume be?",
                "job hunting",
                "is unemployed and job hunting",
                "are unemployed and job hunting",
            ),
            _r(
                "What is a typical salary for a project manager?",
                "project management",
                "is a project manager",
                "are a project manager",
            ),
        ),
        (
            _r(
                "Write a performance review for an employee who missed several deadlines.",
                "managing staff",
                "manages an underperforming employee",
                "manage an underperforming employee",
            ),
            _r(
                "Write a farewell speech for a principal retiring after twenty years.",
                "school leadership",
                "is a school principal about to retire",
                "are a school principal about to retire",
            ),
        ),
        (
            "How do I prepare for a job interview?",
            "What should I do in my first week at a new job?",
            "How can I ask for a raise?",
        ),
        (
            "Write down three stories that show what you did and what changed because of it.",
            "Ask early how success will be measured.",
            "Learn names and write down who does what.",
            "Bring numbers: what you delivered and what similar roles pay.",
            "Practice answers out loud, not just in your head.",
            "Follow up in writing after important conversations.",
        ),
        (
            "you could frame this around the work you do day to day",
            "it may help to treat this like a small goal at work",
        ),
    ),
    Domain(
        "health",
        (
            _c("better sleep", "is trying to go to bed earlier", "are trying to go to bed earlier"),
            _c(
                "meditation",
                "meditates for ten minutes each morning",
                "meditate for ten minutes each morning",
            ),
            _c(
                "work stress",
                "is dealing with a lot of stress at work",
                "are dealing with a lot of stress at work",
            ),
            _c("type 2 diabetes", "manages type 2 diabetes", "manage type 2 diabetes"),
        ),
        (
            _r(
                "What are the symptoms of low vitamin D?",
                "vitamin D deficiency",
                "has a vitamin D deficiency",
                "have a vitamin D deficiency",
            ),
            _r(
                "Is it normal to get a headache after coffee?",
                "chronic headaches",
                "suffers from chronic headaches",
                "suffer from chronic headaches",
            ),
            _r(
                "How much water should I drink a day?",
                "wellness",
                "is a health enthusiast",
                "are a health enthusiast",
            ),
        ),
        (
            _r(
                "Write a brochure paragraph for a physiotherapist who treats sports injuries.",
                "physiotherapy",
                "is a physiotherapist",
                "are a physiotherapist",
            ),
            _r(
                "Write a diary entry for a character recovering from knee surgery.",
                "knee surgery",
                "is recovering from knee surgery",
                "are recovering from knee surgery",
            ),
        ),
        (
            "How can I fall asleep faster?",
            "What are simple ways to reduce stress during the day?",
            "How do I build a healthy morning routine?",
        ),
        (
            "Keep the same wake-up time every day, even on weekends.",
            "Take a short walk outside when stress builds up.",
            "Put screens away half an hour before bed.",
            "Start the morning with water and a little daylight.",
            "Breathe out longer than you breathe in for a minute.",
            "Change one habit at a time so it sticks.",
        ),
        (
            "you could make this part of looking after your health",
            "it may help to keep this gentle and low-pressure",
        ),
    ),
    Domain(
        "books",
        (
            _c("fantasy novels", "reads a lot of fantasy novels", "read a lot of fantasy novels"),
            _c(
                "writing a mystery novel",
                "is writing a mystery novel",
                "are writing a mystery novel",
            ),
            _c("poetry", "writes poetry in the evenings", "write poetry in the evenings"),
            _c("book clubs", "runs a monthly book club", "run a monthly book club"),
        ),
        (
            _r(
                "Who wrote Pride and Prejudice?",
                "English literature",
                "is an English literature student",
                "are an English literature student",
            ),
            _r(
                "What rhymes with orange?",
                "being a poet",
                "is a published poet",
                "are a published poet",
            ),
            _r(
                "Summarize the plot of Moby-Dick in three sentences.",
                "American literature",
                "is studying American literature",
                "are studying American literature",
            ),
        ),
        (
            _r(
                "Write an author bio for a novelist whose debut thriller was a bestseller.",
                "best-selling fiction",
                "is a best-selling thriller author",
                "are a best-selling thriller author",
            ),
            _r(
                "Write a notice from a librarian announcing new opening hours.",
                "library work",
                "is a librarian",
                "are a librarian",
            ),
        ),
        (
            "How do I get back into reading regularly?",
            "What are tips for writing a short story?",
            "How can I get past writer's block?",
        ),
        (
            "Carry a book everywhere so spare minutes become reading time.",
            "Give yourself permission to abandon books you do not enjoy.",
            "Start a story as close to the conflict as you can.",
            "Write a bad first draft on purpose, then revise.",
            "Set a small page or word goal and stop when you reach it.",
            "Read your dialogue out loud to hear what sounds false.",
        ),
        (
            "you could approach this the way you approach a good book, a chapter at a time",
            "it may help to keep a notebook for this",
        ),
    ),
    Domain(
        "gaming",
        (
            _c("strategy games", "plays strategy games online", "play strategy games online"),
            _c("board games", "hosts board game nights", "host board game nights"),
            _c("speedrunning", "speedruns classic platformers", "speedrun classic platformers"),
            _c("game design", "is designing an indie game", "are designing an indie game"),
        ),
        (
            _r(
                "When does the next Starfall Saga game come out?",
                "hardcore gaming",
                "is a hardcore gamer",
                "are a hardcore gamer",
            ),
            _r(
                "How do you play chess?", "chess", "is a chess enthusiast", "are a chess enthusiast"
            ),
            _r(
                "What does 'GG' mean?",
                "esports",
                "plays competitive esports",
                "play competitive esports",
            ),
        ),
        (
            _r(
                "Write patch notes for a studio lead announcing a balance update.",
                "running a game studio",
                "leads a game studio",
                "lead a game studio",
            ),
            _r(
                "Write a backstory for a dwarf blacksmith in my tabletop campaign.",
                "blacksmithing",
                "works as a blacksmith",
                "work as a blacksmith",
            ),
        ),
        (
            "How can I get better at strategy games?",
            "What are good games to play with a group of friends?",
            "How do I balance gaming with other responsibilities?",
        ),
        (
            "Watch replays of your own losses before anyone else's wins.",
            "Learn one strategy well before trying many.",
            "Pick games with short rules for mixed groups.",
            "Set a timer before you start a session.",
            "Play cooperative games when people have different skill levels.",
            "Take breaks between matches to reset.",
        ),
        (
            "you could treat this like a game with small levels to clear",
            "it may help to make this social, like a game night",
        ),
    ),
)

#: domains that share enough ground for an LLM (and sometimes a person) to see a link
ADJACENT_DOMAINS: frozenset[frozenset[str]] = frozenset(
    frozenset(p)
    for p in (
        ("cooking", "health"),
        ("cooking", "parenting"),
        ("cooking", "gardening"),
        ("fitness", "health"),
        ("travel", "photography"),
        ("travel", "languages"),
        ("finance", "career"),
        ("finance", "home"),
        ("programming", "gaming"),
        ("programming", "career"),
        ("gardening", "home"),
        ("music", "books"),
        ("parenting", "health"),
        ("pets", "home"),
        ("books", "languages"),
        ("gaming", "books"),
    )
)

#: communication-style claims (domain "style"): they can matter for any prompt
STYLE_CLAIMS: tuple[tuple[Claim, str], ...] = (
    (
        _c("short answers", "prefers short, direct answers", "prefer short, direct answers"),
        "Please keep it short.",
    ),
    (
        _c(
            "step-by-step instructions",
            "likes step-by-step instructions",
            "like step-by-step instructions",
        ),
        "Can you walk me through it step by step?",
    ),
    (
        _c(
            "concrete examples",
            "often asks for concrete examples",
            "often ask for concrete examples",
        ),
        "Could you show me an example?",
    ),
    (
        _c(
            "a casual tone", "writes in a casual, friendly tone", "write in a casual, friendly tone"
        ),
        "haha ok thanks, super helpful",
    ),
    (
        _c(
            "bullet points",
            "prefers answers formatted as bullet points",
            "prefer answers formatted as bullet points",
        ),
        "Bullet points please.",
    ),
    (
        _c("humor", "enjoys a bit of humor in replies", "enjoy a bit of humor in replies"),
        "Ha, love it. Keep the jokes coming.",
    ),
)

STYLE_BRIDGES: dict[str, str] = {
    "short answers": "I have kept this brief and to the point",
    "step-by-step instructions": "I have laid this out in order, one step after another",
    "concrete examples": "here is one worked case to make it concrete",
    "a casual tone": "no need to overthink it, honestly",
    "bullet points": "I have kept the main points as a scannable list",
    "humor": "and yes, it is allowed to be a little fun",
}

DOMAIN_NAMES: tuple[str, ...] = tuple(d.name for d in DOMAINS)
DOMAIN_BY_NAME: dict[str, Domain] = {d.name: d for d in DOMAINS}
STYLE = "style"


def adjacent(a: str, b: str) -> bool:
    """Whether two domains are neighbours in the world's (symmetric) domain graph."""
    return frozenset((a, b)) in ADJACENT_DOMAINS


def neighbours(name: str) -> tuple[str, ...]:
    """The domains adjacent to ``name``, in the fixed domain order."""
    return tuple(d for d in DOMAIN_NAMES if d != name and adjacent(name, d))


def first_person(second: str) -> str:
    """'are learning X' -> 'am learning X'; other verbs are the same after "I" and "you"."""
    return "am " + second[4:] if second.startswith("are ") else second


def pick(rng: np.random.Generator, options: tuple[str, ...] | list[str]) -> str:
    """One option, uniformly; the only way this module's callers choose text."""
    return options[int(rng.integers(len(options)))]


# --------------------------------------------------------------------------- stage 1 text

SUPPORTED_REASONS = (
    "Across {n} conversations they describe {noun} as part of their own life.",
    "They bring up {noun} in {n} separate chats and ask follow-up questions about it.",
    "They repeatedly mention their own routine around {noun}.",
    "In {n} conversations the user talks about {noun} in the first person.",
)
SINGLE_SUPPORTED_REASONS = (
    "They describe their own experience with {noun} in detail.",
    "The user explains that this is something they do themselves.",
)
SPECULATIVE_TEMPLATES = (
    ("may enjoy {noun}", "may enjoy {noun}"),
    ("might be interested in {noun}", "might be interested in {noun}"),
    ("may also care about {noun}", "may also care about {noun}"),
)
SPECULATIVE_REASONS = (
    "Their questions about {base} suggest they might also like {noun}.",
    "Someone interested in {base} could plausibly be drawn to {noun}.",
    "This is inferred from their interest in {base}.",
)
OVERGENERALIZED_REASONS = (
    'The user asked: "{request}"',
    'They asked "{request}", which points to this.',
    'Based on the request "{request}".',
)
CONFUSED_REASONS = (
    'The user wrote: "{request}"',
    'In the request "{request}", the user gives this detail.',
    'They described this when asking: "{request}"',
)
STYLE_REASONS = (
    'They wrote "{cue}" in {n} conversations.',
    'In {n} conversations their messages include requests such as "{cue}"',
)
INTEREST_TEMPLATE = ("is interested in {noun}", "are interested in {noun}")

PERSONAL_OPENERS = (
    "I {first} and I keep wondering how to get better at it.",
    "So I {first}. What should I focus on next?",
    "Quick question: I {first}, and I'm not sure I'm doing it right.",
    "I {first}, and lately it has been harder than I expected.",
    "Since I {first}, do you have any advice?",
)
ASSISTANT_OPENERS = ("Happy to help.", "Good question.", "Sure.", "That sounds like a great plan.")
DRAFT_OPENERS = ("Here's a draft you can adapt:", "Here is a first version:", "Sure, try this:")

# --------------------------------------------------------------------------- stage 3 text

INTROS = (
    "Here are a few practical ideas.",
    "Good question. A few things tend to help most:",
    "There is no single answer, but these steps work for most people.",
    "A simple plan usually beats a perfect one. Try this:",
)
CLOSINGS = (
    "Start small and adjust as you go.",
    "Pick one idea to try this week.",
    "Small, steady changes add up.",
    "Come back to this list after a couple of weeks and see what stuck.",
)
EXPLICIT_CUES = ("Since you", "Because you", "Given that you", "As you")
POOR_EXPLICIT = (
    "you might also want to read more about {noun} in general",
    "it is worth mentioning {noun} here as well",
    "I should point out that {noun} could come up too",
)
POOR_IMPLICIT = (
    "You may also want to look at this from a slightly different angle.",
    "There are other considerations too, depending on your situation.",
    "Everyone is different, so adapt this as needed.",
    "Some of this may or may not fit, so take what is useful.",
    "You know your own circumstances best.",
)
#: how each simulated generator lays out a list (a visible, harmless signature)
LIST_STYLES = ("markdown", "numbered", "dash", "prose", "bold")


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def format_list(style: str, items: list[str]) -> str:
    """The generator's house style for a list of advice sentences."""
    if style == "markdown":
        return "## What to do\n" + "\n".join(f"- {t}" for t in items)
    if style == "numbered":
        return "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1))
    if style == "dash":
        return "\n".join(f"- {t}" for t in items)
    if style == "bold":
        return "\n".join(f"**Tip {i}:** {t}" for i, t in enumerate(items, 1))
    return " ".join(items)


# --------------------------------------------------------------------------- mentions

_STOP = frozenset(
    """a an the and or of to in on at for with by from about as is are am was were be been
    being has have had do does did this that these those it its they their them user users
    you your i me my we our may might also often most more very every each some any not no
    who which what when how than then there here so just one two three ten""".split()
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SECOND_PERSON = re.compile(r"\b(you|your|yours|yourself)\b", re.IGNORECASE)


def _stem(word: str) -> str:
    """A crude stemmer: enough to match 'bakes'/'bake' and 'studies'/'study'."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@functools.lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Lower-cased, stemmed words of ``text`` without function words."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


@functools.lru_cache(maxsize=16384)
def _second_person_sentences(response: str) -> tuple[frozenset[str], ...]:
    return tuple(
        content_words(sentence)
        for sentence in _SENTENCE.split(response)
        if _SECOND_PERSON.search(sentence)
    )


def mentions_attribute(response: str, attribute: str, threshold: float = 0.6) -> bool:
    """Whether one second-person sentence of ``response`` repeats most of ``attribute``.

    This is how the bundled world marks an explicit mention, and the definition its data
    card and calibration check use (the study's mention analysis asks the same question).
    """
    words = content_words(attribute)
    if not words:
        return False
    return any(
        len(words & sentence) / len(words) >= threshold
        for sentence in _second_person_sentences(response)
    )
