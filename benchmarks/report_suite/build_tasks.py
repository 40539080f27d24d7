"""Write every report-suite skill's tasks.jsonl from the tables below (run from the repository root):

    python benchmarks/report_suite/build_tasks.py

Each row is (request, gold reply); the checks follow from the skill's contract and the row's gold: a label, a
value computed or looked up from the request, or a field transformed, so that a reply restating the request in
the required form fails. The gold reply is the task's `reference` (envs/tasks/records.py checks it passes the
task's own checks). Rows are in split order: 20 train, 6 val, 10 test; the test requests are worded differently
and on other subjects than the training ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SPLITS = ["train"] * 20 + ["val"] * 6 + ["test"] * 10

Row = tuple[str, str]

# ---------------------------------------------------------------- expense-category: one bare label
EXPENSES: list[Row] = [
    ("Categorise this expense: taxi from the airport to the hotel, 38 EUR.", "travel"),
    ("Categorise this expense: team lunch at the noodle bar, 64 EUR.", "meals"),
    ("Categorise this expense: annual JetBrains licence, 249 EUR.", "software"),
    ("Categorise this expense: printer paper and toner, 52 EUR.", "office"),
    ("Categorise this expense: return train ticket to Hamburg, 119 EUR.", "travel"),
    ("Categorise this expense: coffee and pastries for the client meeting, 23 EUR.", "meals"),
    ("Categorise this expense: Figma subscription for March, 45 EUR.", "software"),
    ("Categorise this expense: a new desk chair for the office, 310 EUR.", "office"),
    ("Categorise this expense: hotel room in Madrid for two nights, 280 EUR.", "travel"),
    ("Categorise this expense: dinner with the visiting partners, 146 EUR.", "meals"),
    ("Categorise this expense: GitHub Copilot seats for the team, 190 EUR.", "software"),
    ("Categorise this expense: whiteboard markers and sticky notes, 18 EUR.", "office"),
    ("Categorise this expense: flight to Lisbon for the conference, 210 EUR.", "travel"),
    ("Categorise this expense: pizza for the release night, 75 EUR.", "meals"),
    ("Categorise this expense: Slack Pro plan renewal, 96 EUR.", "software"),
    ("Categorise this expense: filing cabinet for the finance room, 140 EUR.", "office"),
    ("Categorise this expense: rental car for the site visit, 165 EUR.", "travel"),
    ("Categorise this expense: breakfast buffet at the offsite, 88 EUR.", "meals"),
    ("Categorise this expense: Adobe Acrobat licence, 180 EUR.", "software"),
    ("Categorise this expense: monitor stand and cable trays, 67 EUR.", "office"),
    ("Categorise this expense: parking at the airport for three days, 54 EUR.", "travel"),
    ("Categorise this expense: sandwiches for the workshop, 41 EUR.", "meals"),
    ("Categorise this expense: Notion team plan, 80 EUR.", "software"),
    ("Categorise this expense: staplers and folders, 22 EUR.", "office"),
    ("Categorise this expense: bus fare to the customer's warehouse, 9 EUR.", "travel"),
    ("Categorise this expense: a year of 1Password business, 95 EUR.", "software"),
    ("Which bucket should finance book this receipt under? Uber ride to the train station.", "travel"),
    ("Which bucket should finance book this receipt under? Sushi for the interview panel.", "meals"),
    ("Which bucket should finance book this receipt under? Zoom webinar add-on.", "software"),
    ("Which bucket should finance book this receipt under? Ergonomic keyboard for reception.", "office"),
    ("Receipt from the trip: overnight ferry cabin to Helsinki. Category?", "travel"),
    ("Receipt from the week: burgers for the hackathon judges. Category?", "meals"),
    ("Receipt from the month: Datadog monitoring plan. Category?", "software"),
    ("Receipt from the move: label printer for the mail room. Category?", "office"),
    ("Book this one for me: visa fee and airport shuttle in Nairobi.", "travel"),
    ("Book this one for me: Postman enterprise seats.", "software"),
]

# ---------------------------------------------------------------- sentiment-line: `Sentiment: <label>`
REVIEWS: list[Row] = [
    ("Review: The blender is powerful and easy to clean. I love it.", "positive"),
    ("Review: The blender broke after two weeks and support never answered.", "negative"),
    ("Review: The blender works. It is neither quiet nor loud.", "neutral"),
    ("Review: These headphones sound amazing and the battery lasts all week.", "positive"),
    ("Review: The headphones hurt my ears and the left side crackles.", "negative"),
    ("Review: The headphones arrived on Tuesday in a black box.", "neutral"),
    ("Review: Great tent, stayed dry through a whole night of rain.", "positive"),
    ("Review: The tent poles snapped on the first trip. Waste of money.", "negative"),
    ("Review: The tent is green and weighs about three kilos.", "neutral"),
    ("Review: Best coffee grinder I have owned, consistent and fast.", "positive"),
    ("Review: The grinder is so loud and the burrs jammed twice.", "negative"),
    ("Review: The grinder has twelve settings and a plastic hopper.", "neutral"),
    ("Review: The running shoes are light and comfortable, highly recommend.", "positive"),
    ("Review: The shoes fell apart after a month, terrible quality.", "negative"),
    ("Review: The shoes come in blue and grey.", "neutral"),
    ("Review: Wonderful lamp, warm light and a sturdy base.", "positive"),
    ("Review: The lamp flickers constantly and the switch is flimsy.", "negative"),
    ("Review: The lamp uses an E27 bulb, not included.", "neutral"),
    ("Review: This backpack is excellent, lots of pockets and very durable.", "positive"),
    ("Review: The backpack zipper broke on day one. Very disappointed.", "negative"),
    ("Review: The kettle boils fast and looks beautiful on the counter.", "positive"),
    ("Review: The kettle leaks from the bottom and smells of plastic.", "negative"),
    ("Review: The kettle holds 1.7 litres.", "neutral"),
    ("Review: Fantastic mattress, my back pain is gone.", "positive"),
    ("Review: The mattress sagged within a month. Avoid.", "negative"),
    ("Review: The mattress was delivered rolled up in plastic.", "neutral"),
    ("A customer wrote about our bike lock: 'Solid, simple and I feel safe leaving my bike.' How do they feel?",
     "positive"),
    ("A customer wrote about our bike lock: 'Rusted in a week and the key snapped.' How do they feel?", "negative"),
    ("A customer wrote about our bike lock: 'It has a four digit code.' How do they feel?", "neutral"),
    ("Mood of this app store comment: 'Crashes every time I open the camera. Useless.'", "negative"),
    ("Mood of this app store comment: 'Clean design and the sync is instant, five stars!'", "positive"),
    ("Mood of this app store comment: 'Version 2.3 moved the settings to the top bar.'", "neutral"),
    ("Tone of this hotel guest note: 'Staff were lovely and the view was stunning.'", "positive"),
    ("Tone of this hotel guest note: 'Dirty towels and nobody fixed the heating.'", "negative"),
    ("Tone of this hotel guest note: 'Checkout is at eleven.'", "neutral"),
    ("Tone of this hotel guest note: 'Breakfast was cold and the room smelled of smoke.'", "negative"),
]

# ---------------------------------------------------------------- order-extract: JSON with two copied fields
ORDERS: list[tuple[str, str, str]] = [
    ("Extract the order: Order 4821 for Dana Kim ships to Lyon on Friday.", "4821", "Lyon"),
    ("Extract the order: Order 1190 from Omar Haddad goes to Leeds next week.", "1190", "Leeds"),
    ("Extract the order: Order 7734 for Mei Chen will be delivered in Osaka.", "7734", "Osaka"),
    ("Extract the order: Order 3056 from Lukas Weber ships to Graz today.", "3056", "Graz"),
    ("Extract the order: Order 9912 for Ana Souza is going to Recife.", "9912", "Recife"),
    ("Extract the order: Order 2468 from Tom Byrne ships to Cork tomorrow.", "2468", "Cork"),
    ("Extract the order: Order 5307 for Sara Lind will be delivered in Malmo.", "5307", "Malmo"),
    ("Extract the order: Order 8145 from Raj Patel goes to Pune on Monday.", "8145", "Pune"),
    ("Extract the order: Order 6620 for Ines Duarte ships to Braga.", "6620", "Braga"),
    ("Extract the order: Order 4079 from Kofi Mensah is going to Accra.", "4079", "Accra"),
    ("Extract the order: Order 1733 for Elif Kaya ships to Izmir this week.", "1733", "Izmir"),
    ("Extract the order: Order 2901 from Jonas Berg goes to Bergen.", "2901", "Bergen"),
    ("Extract the order: Order 8576 for Chloe Martin will be delivered in Nantes.", "8576", "Nantes"),
    ("Extract the order: Order 3348 from Pavel Novak ships to Brno on Thursday.", "3348", "Brno"),
    ("Extract the order: Order 7012 for Yuki Sato goes to Sendai.", "7012", "Sendai"),
    ("Extract the order: Order 5589 from Liam Walsh is going to Galway.", "5589", "Galway"),
    ("Extract the order: Order 9263 for Nora Aziz ships to Tunis.", "9263", "Tunis"),
    ("Extract the order: Order 1457 from Diego Ruiz will be delivered in Malaga.", "1457", "Malaga"),
    ("Extract the order: Order 6834 for Hana Park goes to Busan on Sunday.", "6834", "Busan"),
    ("Extract the order: Order 4196 from Max Fischer ships to Bremen.", "4196", "Bremen"),
    ("Extract the order: Order 2715 for Lea Roux is going to Dijon.", "2715", "Dijon"),
    ("Extract the order: Order 8390 from Ivan Petrov ships to Varna.", "8390", "Varna"),
    ("Extract the order: Order 6051 for Zoe Grant will be delivered in Perth.", "6051", "Perth"),
    ("Extract the order: Order 3827 from Ali Khan goes to Lahore.", "3827", "Lahore"),
    ("Extract the order: Order 9478 for Mia Jensen ships to Aarhus.", "9478", "Aarhus"),
    ("Extract the order: Order 1602 from Sam Otieno is going to Mombasa.", "1602", "Mombasa"),
    ("Customer email: 'Hi, my parcel for order #5173 still has not reached Porto. Can you check?'", "5173", "Porto"),
    ("Support chat: the courier says order 2284 is stuck in a depot outside Krakow.", "2284", "Krakow"),
    ("Please log this: we promised the replacement for order 6940 would arrive in Turin by May.", "6940", "Turin"),
    ("Warehouse note: pallet for order no. 3615 was loaded on the truck to Ghent.", "3615", "Ghent"),
    ("Voicemail transcript: calling about order 8801, delivery address is in Seville.", "8801", "Seville"),
    ("From the returns desk: order 4452 came back from Riga with a damaged box.", "4452", "Riga"),
    ("Courier update: order 7329 out for delivery in Utrecht.", "7329", "Utrecht"),
    ("Sales handoff: rush order 1068, the client's office is in Quebec.", "1068", "Quebec"),
    ("Escalation: order 5937 was sent to Bilbao instead of the right address.", "5937", "Bilbao"),
    ("Reminder from ops: order 2546 must be in Tallinn before the trade fair.", "2546", "Tallinn"),
]

# ---------------------------------------------------------------- iso-date: a date transformed to YYYY-MM-DD
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DATES: list[tuple[str, str]] = [
    ("Convert to ISO format: March 5, 2024", "2024-03-05"),
    ("Convert to ISO format: July 19, 2023", "2023-07-19"),
    ("Convert to ISO format: December 1, 2025", "2025-12-01"),
    ("Convert to ISO format: February 28, 2022", "2022-02-28"),
    ("Convert to ISO format: October 10, 2024", "2024-10-10"),
    ("Convert to ISO format: January 31, 2021", "2021-01-31"),
    ("Convert to ISO format: June 6, 2026", "2026-06-06"),
    ("Convert to ISO format: September 14, 2023", "2023-09-14"),
    ("Convert to ISO format: April 2, 2025", "2025-04-02"),
    ("Convert to ISO format: November 23, 2022", "2022-11-23"),
    ("Convert to ISO format: August 8, 2024", "2024-08-08"),
    ("Convert to ISO format: May 17, 2021", "2021-05-17"),
    ("Convert to ISO format: March 29, 2026", "2026-03-29"),
    ("Convert to ISO format: January 3, 2024", "2024-01-03"),
    ("Convert to ISO format: July 4, 2025", "2025-07-04"),
    ("Convert to ISO format: October 27, 2023", "2023-10-27"),
    ("Convert to ISO format: December 12, 2021", "2021-12-12"),
    ("Convert to ISO format: June 21, 2022", "2022-06-21"),
    ("Convert to ISO format: February 9, 2026", "2026-02-09"),
    ("Convert to ISO format: September 30, 2024", "2024-09-30"),
    ("Convert to ISO format: April 16, 2023", "2023-04-16"),
    ("Convert to ISO format: November 5, 2025", "2025-11-05"),
    ("Convert to ISO format: August 22, 2021", "2021-08-22"),
    ("Convert to ISO format: May 1, 2026", "2026-05-01"),
    ("Convert to ISO format: March 11, 2022", "2022-03-11"),
    ("Convert to ISO format: January 25, 2025", "2025-01-25"),
    ("The contract starts on the 9th of July 2025. Give that date as YYYY-MM-DD.", "2025-07-09"),
    ("Our launch is planned for 14 February 2027; what is it in ISO 8601?", "2027-02-14"),
    ("Write the invoice date 3 November 2024 the way the ledger wants it.", "2024-11-03"),
    ("The lease ends 30 April 2028. Ledger format please.", "2028-04-30"),
    ("Payroll runs on the 15th of August 2026 - machine-readable date?", "2026-08-15"),
    ("Audit deadline: 2 December 2025. Give me the ISO date.", "2025-12-02"),
    ("The webinar moved to 20 March 2026. What do I type in the date field?", "2026-03-20"),
    ("Warranty valid until 7 January 2029, as YYYY-MM-DD.", "2029-01-07"),
    ("The board meets on 26 October 2025; ISO 8601 form?", "2025-10-26"),
    ("Shipment expected 11 June 2027. Store it as an ISO date.", "2027-06-11"),
]

# ---------------------------------------------------------------- title-slug: a title transformed to a URL slug
TITLES: list[str] = [
    "Ten Tips for Remote Teams", "How We Cut Our Cloud Bill", "Release Notes for Version 4", "Hiring Your First Designer",
    "Why Tests Fail at Night", "A Guide to Code Review", "Our New Office in Berlin", "Five Lessons from On Call",
    "Building a Status Page", "The Case for Small Pull Requests", "Moving to Kubernetes", "Welcome to the Team",
    "What Changed in the API", "Planning the Next Quarter", "Notes from the Security Audit", "Making Meetings Shorter",
    "How to Write a Runbook", "Our Year in Numbers", "Better Error Messages", "Onboarding in One Week",
    "Migrating the Search Index", "Lessons from a Failed Launch", "A Tour of the Data Platform", "Pricing Page Updates",
    "Scaling the Support Team", "Accessibility Checklist",
    "Spring Garden Planting Calendar", "Baking Sourdough at Home", "Best Hiking Trails in Wales",
    "Budget Travel in Portugal", "Caring for Indoor Plants", "A Beginner Guide to Chess Openings",
    "Fixing a Leaky Faucet", "Winter Running Gear Review", "Learning Spanish with Podcasts", "Homemade Pasta Basics",
]
TITLE_ASKS = ["Make a URL slug for the blog post title: {t}"] * 26 + [
    "Our editor needs the web address part for the article \"{t}\". What is it?",
    "Turn the headline \"{t}\" into the slug for its page.",
    "Slugify this recipe or guide title: {t}",
    "What would the permalink slug be for \"{t}\"?",
    "The CMS asks for a slug. Title: {t}",
    "Give the link-friendly version of the title \"{t}\".",
    "Slug for the newsletter piece \"{t}\", please.",
    "Create the path segment for a post called {t}.",
    "Need a slug for this headline: {t}",
    "URL-safe name for the article \"{t}\"?"]


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


# ---------------------------------------------------------------- price-lookup: `<amount> EUR` from a list
PRICES: list[tuple[str, list[tuple[str, int]], str]] = [
    ("Price list: coffee {}, tea {}, cake {}. How much is the tea?", [("coffee", 3), ("tea", 2), ("cake", 4)], "tea"),
    ("Price list: apple {}, pear {}, plum {}. How much is the plum?", [("apple", 1), ("pear", 5), ("plum", 2)], "plum"),
    ("Price list: pen {}, notebook {}, ruler {}. How much is the notebook?",
     [("pen", 2), ("notebook", 7), ("ruler", 3)], "notebook"),
    ("Price list: soup {}, salad {}, bread {}. How much is the soup?", [("soup", 6), ("salad", 8), ("bread", 3)], "soup"),
    ("Price list: socks {}, hat {}, scarf {}. How much is the scarf?", [("socks", 9), ("hat", 14), ("scarf", 22)],
     "scarf"),
    ("Price list: milk {}, eggs {}, butter {}. How much is the butter?", [("milk", 2), ("eggs", 4), ("butter", 5)],
     "butter"),
    ("Price list: cable {}, charger {}, case {}. How much is the cable?", [("cable", 12), ("charger", 25), ("case", 18)],
     "cable"),
    ("Price list: rice {}, beans {}, oil {}. How much is the oil?", [("rice", 3), ("beans", 2), ("oil", 7)], "oil"),
    ("Price list: tulips {}, roses {}, lilies {}. How much are the roses?",
     [("tulips", 11), ("roses", 16), ("lilies", 13)], "roses"),
    ("Price list: hammer {}, saw {}, drill {}. How much is the hammer?", [("hammer", 15), ("saw", 21), ("drill", 89)],
     "hammer"),
    ("Price list: juice {}, water {}, soda {}. How much is the soda?", [("juice", 4), ("water", 1), ("soda", 3)], "soda"),
    ("Price list: lamp {}, rug {}, vase {}. How much is the rug?", [("lamp", 35), ("rug", 120), ("vase", 28)], "rug"),
    ("Price list: paint {}, brush {}, tape {}. How much is the brush?", [("paint", 19), ("brush", 6), ("tape", 4)],
     "brush"),
    ("Price list: jam {}, honey {}, tea {}. How much is the honey?", [("jam", 5), ("honey", 9), ("tea", 6)], "honey"),
    ("Price list: tyre {}, chain {}, pump {}. How much is the pump?", [("tyre", 30), ("chain", 24), ("pump", 17)],
     "pump"),
    ("Price list: shampoo {}, soap {}, towel {}. How much is the towel?", [("shampoo", 7), ("soap", 2), ("towel", 13)],
     "towel"),
    ("Price list: ticket {}, popcorn {}, drink {}. How much is the ticket?",
     [("ticket", 12), ("popcorn", 6), ("drink", 4)], "ticket"),
    ("Price list: mouse {}, keyboard {}, webcam {}. How much is the webcam?",
     [("mouse", 20), ("keyboard", 45), ("webcam", 60)], "webcam"),
    ("Price list: basil {}, mint {}, thyme {}. How much is the mint?", [("basil", 3), ("mint", 2), ("thyme", 4)], "mint"),
    ("Price list: candle {}, frame {}, clock {}. How much is the clock?", [("candle", 8), ("frame", 15), ("clock", 32)],
     "clock"),
    ("Price list: bagel {}, muffin {}, donut {}. How much is the bagel?", [("bagel", 3), ("muffin", 4), ("donut", 2)],
     "bagel"),
    ("Price list: gloves {}, boots {}, jacket {}. How much are the boots?",
     [("gloves", 25), ("boots", 140), ("jacket", 210)], "boots"),
    ("Price list: stamp {}, envelope {}, card {}. How much is the card?", [("stamp", 1), ("envelope", 2), ("card", 5)],
     "card"),
    ("Price list: helmet {}, light {}, bell {}. How much is the light?", [("helmet", 55), ("light", 19), ("bell", 8)],
     "light"),
    ("Price list: cheese {}, ham {}, olives {}. How much is the ham?", [("cheese", 9), ("ham", 7), ("olives", 4)], "ham"),
    ("Price list: glue {}, scissors {}, stapler {}. How much are the scissors?",
     [("glue", 3), ("scissors", 6), ("stapler", 11)], "scissors"),
    ("Our cafe board says latte {}, espresso {}, croissant {}. What does a croissant cost?",
     [("latte", 4), ("espresso", 2), ("croissant", 3)], "croissant"),
    ("The hardware store quoted nails {}, screws {}, bolts {}. What do the bolts cost?",
     [("nails", 6), ("screws", 8), ("bolts", 10)], "bolts"),
    ("Museum fees are adult {}, student {}, child {}. What does a student pay?",
     [("adult", 18), ("student", 11), ("child", 7)], "student"),
    ("The gym charges day pass {}, month {}, year {}. How much for a month?",
     [("day pass", 15), ("month", 49), ("year", 420)], "month"),
    ("Bakery board: rye loaf {}, baguette {}, pretzel {}. Cost of the pretzel?",
     [("rye loaf", 5), ("baguette", 3), ("pretzel", 2)], "pretzel"),
    ("Parking rates: one hour {}, half day {}, full day {}. What is a half day?",
     [("one hour", 4), ("half day", 12), ("full day", 20)], "half day"),
    ("Ferry fares: bicycle {}, car {}, foot passenger {}. What does a car cost?",
     [("bicycle", 9), ("car", 65), ("foot passenger", 14)], "car"),
    ("Course fees: beginner {}, intermediate {}, advanced {}. Fee for advanced?",
     [("beginner", 90), ("intermediate", 120), ("advanced", 150)], "advanced"),
    ("Laundry prices: shirt {}, suit {}, dress {}. How much to clean a suit?",
     [("shirt", 4), ("suit", 16), ("dress", 12)], "suit"),
    ("Zoo tickets: adult {}, senior {}, family {}. What is the family ticket?",
     [("adult", 24), ("senior", 19), ("family", 70)], "family"),
]

# ---------------------------------------------------------------- lang-code: ISO 639-1 code of a sentence
LANGS: list[Row] = [
    ("Which language is this? 'Où est la gare ?'", "fr"), ("Which language is this? 'Wo ist der Bahnhof?'", "de"),
    ("Which language is this? '¿Dónde está la estación?'", "es"), ("Which language is this? 'Dov'è la stazione?'", "it"),
    ("Which language is this? 'Onde fica a estação?'", "pt"), ("Which language is this? 'Waar is het station?'", "nl"),
    ("Which language is this? 'Where is the station?'", "en"), ("Which language is this? 'Merci beaucoup.'", "fr"),
    ("Which language is this? 'Vielen Dank.'", "de"), ("Which language is this? 'Muchas gracias.'", "es"),
    ("Which language is this? 'Grazie mille.'", "it"), ("Which language is this? 'Muito obrigado.'", "pt"),
    ("Which language is this? 'Hartelijk bedankt.'", "nl"), ("Which language is this? 'Thank you very much.'", "en"),
    ("Which language is this? 'Je voudrais un café.'", "fr"), ("Which language is this? 'Ich hätte gern einen Kaffee.'", "de"),
    ("Which language is this? 'Quisiera un café.'", "es"), ("Which language is this? 'Vorrei un caffè.'", "it"),
    ("Which language is this? 'Eu queria um café.'", "pt"), ("Which language is this? 'Ik wil graag een koffie.'", "nl"),
    ("Which language is this? 'Bonne nuit.'", "fr"), ("Which language is this? 'Gute Nacht.'", "de"),
    ("Which language is this? 'Buenas noches.'", "es"), ("Which language is this? 'Buona notte.'", "it"),
    ("Which language is this? 'Boa noite.'", "pt"), ("Which language is this? 'Goede nacht.'", "nl"),
    ("A customer wrote 'Mon colis est arrivé abîmé.' Give the language code.", "fr"),
    ("A customer wrote 'Mein Paket ist beschädigt angekommen.' Give the language code.", "de"),
    ("A customer wrote 'Mi paquete llegó dañado.' Give the language code.", "es"),
    ("A customer wrote 'Il mio pacco è arrivato danneggiato.' Give the language code.", "it"),
    ("A customer wrote 'A minha encomenda chegou danificada.' Give the language code.", "pt"),
    ("A customer wrote 'Mijn pakket is beschadigd aangekomen.' Give the language code.", "nl"),
    ("Tag the language of this review: 'Das Hotel war sauber und ruhig.'", "de"),
    ("Tag the language of this review: 'El hotel estaba limpio y tranquilo.'", "es"),
    ("Tag the language of this review: 'L'hôtel était propre et calme.'", "fr"),
    ("Tag the language of this review: 'The hotel was clean and quiet.'", "en"),
]

# ---------------------------------------------------------------- csv-contact: `name,email` from prose
CONTACTS: list[tuple[str, str, str]] = [
    ("Priya Nair", "priya.nair@example.org", "You can reach {n} at {e} about the invoice."),
    ("Tomas Horvat", "t.horvat@example.com", "{n} asked to be contacted at {e}."),
    ("Grace Lee", "grace@lee-design.example", "Our designer, {n}, uses {e}."),
    ("Ahmed Saleh", "ahmed.saleh@example.net", "Send the contract to {n} ({e})."),
    ("Julia Costa", "jcosta@example.org", "{n} from procurement: {e}."),
    ("Ben Carter", "ben.carter@example.com", "Write to {n} at {e} for the keys."),
    ("Sofia Rossi", "sofia.rossi@example.it", "The new accountant is {n}, email {e}."),
    ("Kenji Mori", "kenji.mori@example.jp", "Please cc {n} on {e}."),
    ("Laura Schmidt", "l.schmidt@example.de", "{n} handles returns; her address is {e}."),
    ("Owen Price", "owen.price@example.co.uk", "For the venue, contact {n} at {e}."),
    ("Amara Obi", "amara.obi@example.com", "{n} can be reached by email at {e}."),
    ("Nils Larsen", "nils@larsen.example", "Reply to {n} via {e}."),
    ("Clara Dubois", "clara.dubois@example.fr", "Our translator {n} ({e}) sent the files."),
    ("Marco Bianchi", "m.bianchi@example.it", "{n} wants the report at {e}."),
    ("Hannah Wolf", "hannah.wolf@example.de", "The trainer is {n}; write to {e}."),
    ("David Kim", "dkim@example.com", "Forward the quote to {n} at {e}."),
    ("Rosa Flores", "rosa.flores@example.mx", "{n} (email {e}) will run the workshop."),
    ("Peter Novak", "peter.novak@example.cz", "Contact {n} at {e} for access."),
    ("Fatima Zahra", "fatima.zahra@example.ma", "{n} is the on-site nurse: {e}."),
    ("Erik Holm", "erik.holm@example.se", "Questions go to {n}, {e}."),
    ("Lina Haddad", "lina.haddad@example.com", "{n} joins as analyst; her email is {e}."),
    ("Victor Ionescu", "v.ionescu@example.ro", "Ask {n} at {e} about the budget."),
    ("Maya Cohen", "maya.cohen@example.org", "The volunteer lead is {n} ({e})."),
    ("Oscar Lind", "oscar.lind@example.se", "Send the photos to {n} at {e}."),
    ("Irene Papas", "irene.papas@example.gr", "{n} coordinates travel: {e}."),
    ("Samuel Adeyemi", "s.adeyemi@example.ng", "Reach {n} on {e} before noon."),
    ("Chiara Greco", "chiara.greco@example.it", "Met {n} at the fair - she said to email {e} with the samples."),
    ("Mateo Silva", "mateo.silva@example.pt", "Business card says {n}, {e}, landscape architect."),
    ("Ingrid Berg", "ingrid.berg@example.no", "New tenant registered: {n}, mailbox {e}."),
    ("Rahul Mehta", "rahul.mehta@example.in", "Signed up for the newsletter: {n} <{e}>."),
    ("Ewa Kowalska", "ewa.kowalska@example.pl", "The choir's new alto, {n}, gave {e} as her address."),
    ("Jack Turner", "jack.turner@example.au", "Lost-property claim filed by {n}, contact {e}."),
    ("Aiko Tanaka", "aiko.tanaka@example.jp", "Guest speaker {n} confirmed via {e}."),
    ("Leon Meyer", "leon.meyer@example.ch", "Plumber for the flat: {n}, reachable at {e}."),
    ("Noor Rahman", "noor.rahman@example.bd", "Scholarship applicant {n} listed {e}."),
    ("Paula Gomez", "paula.gomez@example.ar", "Tour guide booked: {n} ({e})."),
]
CONTACT_ASKS = ["Add this person as a CSV row (name,email): "] * 26 + ["Put this in our contacts sheet as name,email: "] * 5 \
    + ["CSV line (name,email) for the address book, please: "] * 5


def rule(*checks: dict[str, Any]) -> list[dict[str, Any]]:
    return list(checks)


def expense(i: int, row: Row) -> dict[str, Any]:
    return {"task": row[0], "checks": rule({"op": "equals", "arg": row[1]}), "reference": row[1]}


def sentiment(i: int, row: Row) -> dict[str, Any]:
    label = row[1]
    others = [x for x in ("positive", "negative", "neutral") if x != label]
    return {"task": row[0], "reference": f"Sentiment: {label}",
            "checks": rule({"op": "regex", "arg": r"\ASentiment: \w+\.?\s*\Z"},
                           {"op": "fact", "arg": label, "wrong": others})}


def order(i: int, row: tuple[str, str, str]) -> dict[str, Any]:
    task, oid, city = row
    return {"task": task, "reference": json.dumps({"order_id": oid, "city": city}),
            "checks": rule({"op": "regex", "arg": r"\A\s*\{[\s\S]*\}\s*\Z"},
                           {"op": "equals", "key": "order_id", "arg": oid},
                           {"op": "equals", "key": "city", "arg": city})}


def date(i: int, row: tuple[str, str]) -> dict[str, Any]:
    return {"task": row[0], "checks": rule({"op": "equals", "arg": row[1]}), "reference": row[1]}


def title(i: int, t: str) -> dict[str, Any]:
    return {"task": TITLE_ASKS[i].format(t=t), "checks": rule({"op": "equals", "arg": slug(t)}), "reference": slug(t)}


def price(i: int, row: tuple[str, list[tuple[str, int]], str]) -> dict[str, Any]:
    template, items, asked = row
    task = template.format(*(f"{p} EUR" for _, p in items))
    value = dict(items)[asked]
    return {"task": task, "reference": f"{value} EUR",
            "checks": rule({"op": "regex", "arg": r"\A\d+ EUR\.?\s*\Z"},
                           {"op": "fact", "arg": str(value), "wrong": [str(p) for n, p in items if n != asked]})}


def lang(i: int, row: Row) -> dict[str, Any]:
    return {"task": row[0], "checks": rule({"op": "equals", "arg": row[1]}), "reference": row[1]}


def contact(i: int, row: tuple[str, str, str]) -> dict[str, Any]:
    name, email, prose = row
    gold = f"{name},{email}"
    return {"task": CONTACT_ASKS[i] + prose.format(n=name, e=email), "reference": gold,
            "checks": rule({"op": "equals", "arg": gold})}


SKILLS: dict[str, tuple[list[Any], Callable[[int, Any], dict[str, Any]]]] = {
    "expense-category": (EXPENSES, expense), "sentiment-line": (REVIEWS, sentiment), "order-extract": (ORDERS, order),
    "iso-date": (DATES, date), "title-slug": (TITLES, title), "price-lookup": (PRICES, price), "lang-code": (LANGS, lang),
    "csv-contact": (CONTACTS, contact),
}


def records(name: str) -> list[dict[str, Any]]:
    rows, make = SKILLS[name]
    if len(rows) != len(SPLITS):
        raise SystemExit(f"{name}: {len(rows)} rows, want {len(SPLITS)} (20 train, 6 val, 10 test)")
    out, counts = [], {"train": 0, "val": 0, "test": 0}
    for i, (row, split) in enumerate(zip(rows, SPLITS, strict=True)):
        counts[split] += 1
        t = make(i, row)
        out.append({"task_id": f"{name}-{split}-{counts[split]:02d}", "task": t["task"], "split": split,
                    "judge": {"kind": "rule", "checks": t["checks"], "reference": t["reference"]}})
    return out


def main() -> None:
    for name in SKILLS:
        path = HERE / name / "tasks.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records(name)), encoding="utf-8")
        print(f"{path}: {len(records(name))} tasks")


if __name__ == "__main__":
    main()
