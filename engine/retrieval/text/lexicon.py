"""Vocabulary tables of the attribute text engine, as data (docs/text-conventions.md).

Phrases are written as lower-case words separated by single spaces; the tokenizer drops hyphens, so
"t shirt" also matches "t-shirt" and "long sleeved" matches "long-sleeved". One-word forms such as
"tshirt" are listed separately. The parser reads these tables; the generator picks its surface forms
from the ``*_FORMS`` tables, every one of which the parser maps back to the same canonical value.
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------------- colours
#: Colour words and shades → canonical colour (conventions: "Colours").
COLOR_WORDS: dict[str, str] = {
    # red
    "red": "red", "maroon": "red", "scarlet": "red", "crimson": "red", "burgundy": "red", "wine": "red",
    "cherry": "red", "ruby": "red", "brick red": "red", "blood red": "red", "oxblood": "red",
    # orange
    "orange": "orange", "coral": "orange", "peach": "orange", "rust": "orange", "tangerine": "orange",
    "amber": "orange", "apricot": "orange", "burnt orange": "orange",
    # yellow
    "yellow": "yellow", "gold": "yellow", "golden": "yellow", "mustard": "yellow", "lemon": "yellow",
    "canary": "yellow",
    # blue
    "blue": "blue", "navy": "blue", "cobalt": "blue", "teal": "blue", "turquoise": "blue", "sky blue": "blue",
    "azure": "blue", "indigo": "blue", "royal blue": "blue", "baby blue": "blue", "navy blue": "blue",
    "denim blue": "blue", "aqua": "blue", "cyan": "blue", "sapphire": "blue", "petrol": "blue",
    # green
    "green": "green", "olive": "green", "lime": "green", "emerald": "green", "forest green": "green",
    "mint": "green", "khaki green": "green", "sage": "green", "jade": "green", "bottle green": "green",
    "army green": "green", "olive green": "green",
    # purple
    "purple": "purple", "violet": "purple", "lavender": "purple", "lilac": "purple", "mauve": "purple",
    "plum": "purple", "aubergine": "purple", "eggplant": "purple",
    # pink
    "pink": "pink", "magenta": "pink", "fuchsia": "pink", "rose": "pink", "salmon": "pink", "hot pink": "pink",
    "blush": "pink",
    # brown
    "brown": "brown", "chocolate": "brown", "camel": "brown", "coffee": "brown", "tan": "brown",
    "chestnut": "brown", "mocha": "brown", "cognac": "brown", "mahogany": "brown", "caramel": "brown",
    "bronze": "brown",
    # beige
    "beige": "beige", "cream": "beige", "khaki": "beige", "ivory": "beige", "sand": "beige", "stone": "beige",
    "taupe": "beige", "oatmeal": "beige", "ecru": "beige", "fawn": "beige", "nude": "beige",
    # white
    "white": "white", "off white": "white", "snow": "white", "snow white": "white",
    # gray
    "gray": "gray", "grey": "gray", "charcoal": "gray", "silver": "gray", "ash": "gray", "slate": "gray",
    "graphite": "gray", "gunmetal": "gray", "dove grey": "gray", "dove gray": "gray",
    "charcoal grey": "gray", "charcoal gray": "gray",
    # black
    "black": "black", "jet black": "black", "ebony": "black", "pitch black": "black", "jet": "black",
}

#: Words that only shade a colour ("dark green" → green); they never state a colour themselves.
SHADE_MODIFIERS: frozenset[str] = frozenset({
    "dark", "light", "bright", "pale", "deep", "pastel", "neon", "muted", "faded", "dull", "vivid", "rich",
    "soft", "dusty", "washed", "darkish", "lightish", "brightly", "coloured", "colored", "toned", "ish",
    "dusky", "fluorescent", "hi", "vis", "vibrant", "shiny", "metallic", "mid", "medium", "warm", "cool",
})

#: Canonical clothing colour → hair colour, for a colour word bound to hair ("golden hair" → blonde).
HAIR_FROM_COLOR: dict[str, str] = {
    "black": "black", "brown": "brown", "yellow": "blonde", "gray": "gray", "white": "white", "red": "red",
    "orange": "red", "beige": "blonde",
}

#: Words that name a hair colour on their own ("a blonde woman", "a redhead"); no gender is implied.
HAIR_COLOR_WORDS: dict[str, str] = {
    "blonde": "blonde", "blond": "blonde", "platinum": "blonde", "platinum blonde": "blonde",
    "strawberry blonde": "blonde", "dirty blonde": "blonde", "sandy": "blonde", "fair haired": "blonde",
    "brunette": "brown", "brunet": "brown", "ginger": "red", "auburn": "red", "redhead": "red",
    "redheaded": "red", "copper": "red", "salt and pepper": "gray", "greying": "gray", "graying": "gray",
}

# -------------------------------------------------------------------------------------------- garments
#: Item nouns: phrase → (slot, canonical value or None). Slot "sink" names things outside the ontology
#: that still take a colour word ("white sneakers" must not colour anything else). A None value names
#: the slot without a type ("a red top" → top_color only).
ITEM_NOUNS: dict[str, tuple[str, str | None]] = {
    # hats
    "cap": ("hat", "cap"), "baseball cap": ("hat", "cap"), "peaked cap": ("hat", "cap"),
    "flat cap": ("hat", "cap"), "ball cap": ("hat", "cap"), "trucker cap": ("hat", "cap"),
    "snapback": ("hat", "cap"), "beanie": ("hat", "beanie"), "woolly hat": ("hat", "beanie"),
    "wooly hat": ("hat", "beanie"), "woollen hat": ("hat", "beanie"), "knit hat": ("hat", "beanie"),
    "knit cap": ("hat", "beanie"), "knitted hat": ("hat", "beanie"), "knitted cap": ("hat", "beanie"),
    "toque": ("hat", "beanie"), "bobble hat": ("hat", "beanie"), "ski hat": ("hat", "beanie"),
    "wool hat": ("hat", "beanie"), "winter hat": ("hat", "beanie"),
    "hat": ("hat", "brimmed_hat"), "sun hat": ("hat", "brimmed_hat"), "sunhat": ("hat", "brimmed_hat"),
    "fedora": ("hat", "brimmed_hat"), "cowboy hat": ("hat", "brimmed_hat"), "bucket hat": ("hat", "brimmed_hat"),
    "straw hat": ("hat", "brimmed_hat"), "brimmed hat": ("hat", "brimmed_hat"), "trilby": ("hat", "brimmed_hat"),
    "panama hat": ("hat", "brimmed_hat"), "panama": ("hat", "brimmed_hat"), "bowler hat": ("hat", "brimmed_hat"),
    "wide brimmed hat": ("hat", "brimmed_hat"), "top hat": ("hat", "brimmed_hat"),
    "helmet": ("hat", "helmet"), "hood": ("hat", "hood"), "hooded head": ("hat", "hood"),
    "headwear": ("hat", None), "headgear": ("hat", None), "head covering": ("hat", None),
    # tops
    "t shirt": ("top", "t_shirt"), "tshirt": ("top", "t_shirt"), "tee": ("top", "t_shirt"),
    "tee shirt": ("top", "t_shirt"), "teeshirt": ("top", "t_shirt"),
    "shirt": ("top", "shirt"), "button up": ("top", "shirt"), "button down": ("top", "shirt"),
    "button up shirt": ("top", "shirt"), "button down shirt": ("top", "shirt"), "polo": ("top", "shirt"),
    "polo shirt": ("top", "shirt"), "flannel": ("top", "shirt"), "flannel shirt": ("top", "shirt"),
    "dress shirt": ("top", "shirt"), "blouse": ("top", "blouse"),
    "sweater": ("top", "sweater"), "jumper": ("top", "sweater"), "pullover": ("top", "sweater"),
    "cardigan": ("top", "sweater"), "knit": ("top", "sweater"), "cardi": ("top", "sweater"),
    "turtleneck": ("top", "sweater"), "turtleneck sweater": ("top", "sweater"), "sweater vest": ("top", "vest"),
    "hoodie": ("top", "hoodie"), "hoody": ("top", "hoodie"), "hooded sweatshirt": ("top", "hoodie"),
    "hooded top": ("top", "hoodie"), "sweatshirt": ("top", "hoodie"), "hooded jumper": ("top", "hoodie"),
    "jacket": ("top", "jacket"), "windbreaker": ("top", "jacket"), "blazer": ("top", "jacket"),
    "bomber jacket": ("top", "jacket"), "anorak": ("top", "jacket"), "fleece": ("top", "jacket"),
    "bomber": ("top", "jacket"), "puffer": ("top", "jacket"), "cagoule": ("top", "jacket"),
    "coat": ("top", "coat"), "overcoat": ("top", "coat"), "trench coat": ("top", "coat"),
    "trenchcoat": ("top", "coat"), "parka": ("top", "coat"), "raincoat": ("top", "coat"),
    "rain coat": ("top", "coat"), "mac": ("top", "coat"), "mackintosh": ("top", "coat"), "trench": ("top", "coat"),
    "vest": ("top", "vest"), "tank top": ("top", "vest"), "waistcoat": ("top", "vest"), "gilet": ("top", "vest"),
    "tank": ("top", "vest"), "singlet": ("top", "vest"), "camisole": ("top", "vest"),
    "dress": ("top", "dress"), "gown": ("top", "dress"), "sundress": ("top", "dress"), "sun dress": ("top", "dress"),
    "frock": ("top", "dress"),
    "top": ("top", None), "upper body": ("top", None), "upper garment": ("top", None),
    "upper body clothing": ("top", None), "upper clothing": ("top", None), "crop top": ("top", None),
    # bottoms
    "trousers": ("bottom", "trousers"), "pants": ("bottom", "trousers"), "slacks": ("bottom", "trousers"),
    "chinos": ("bottom", "trousers"), "joggers": ("bottom", "trousers"), "sweatpants": ("bottom", "trousers"),
    "sweat pants": ("bottom", "trousers"), "track pants": ("bottom", "trousers"), "trackpants": ("bottom", "trousers"),
    "tracksuit bottoms": ("bottom", "trousers"), "khakis": ("bottom", "trousers"), "cargos": ("bottom", "trousers"),
    "jogging bottoms": ("bottom", "trousers"), "trouser": ("bottom", "trousers"),
    "jeans": ("bottom", "jeans"), "denims": ("bottom", "jeans"), "denim": ("bottom", "jeans"),
    "jean": ("bottom", "jeans"),
    "shorts": ("bottom", "shorts"), "skirt": ("bottom", "skirt"), "miniskirt": ("bottom", "skirt"),
    "mini skirt": ("bottom", "skirt"), "leggings": ("bottom", "leggings"), "tights": ("bottom", "leggings"),
    "bottoms": ("bottom", None), "lower body": ("bottom", None), "lower garment": ("bottom", None),
    "lower body clothing": ("bottom", None), "lower clothing": ("bottom", None),
    # shoes ("shoes" names footwear without a type)
    "sneakers": ("shoe", "sneakers"), "sneaker": ("shoe", "sneakers"), "trainers": ("shoe", "sneakers"),
    "trainer": ("shoe", "sneakers"), "running shoes": ("shoe", "sneakers"), "tennis shoes": ("shoe", "sneakers"),
    "sports shoes": ("shoe", "sneakers"), "sport shoes": ("shoe", "sneakers"), "athletic shoes": ("shoe", "sneakers"),
    "kicks": ("shoe", "sneakers"), "runners": ("shoe", "sneakers"),
    "boots": ("shoe", "boots"), "boot": ("shoe", "boots"), "ankle boots": ("shoe", "boots"),
    "wellies": ("shoe", "boots"), "wellingtons": ("shoe", "boots"), "wellington boots": ("shoe", "boots"),
    "sandals": ("shoe", "sandals"), "sandal": ("shoe", "sandals"), "flip flops": ("shoe", "sandals"),
    "flipflops": ("shoe", "sandals"), "flip flop": ("shoe", "sandals"),
    "leather shoes": ("shoe", "leather_shoes"), "dress shoes": ("shoe", "leather_shoes"),
    "loafers": ("shoe", "leather_shoes"), "oxfords": ("shoe", "leather_shoes"), "brogues": ("shoe", "leather_shoes"),
    "formal shoes": ("shoe", "leather_shoes"), "loafer": ("shoe", "leather_shoes"),
    "high heels": ("shoe", "high_heels"), "heels": ("shoe", "high_heels"), "stilettos": ("shoe", "high_heels"),
    "pumps": ("shoe", "high_heels"), "high heeled shoes": ("shoe", "high_heels"),
    "heeled shoes": ("shoe", "high_heels"),
    "stiletto heels": ("shoe", "high_heels"), "high heel shoes": ("shoe", "high_heels"),
    "slippers": ("shoe", "slippers"), "slipper": ("shoe", "slippers"),
    "shoes": ("shoe", None), "shoe": ("shoe", None), "footwear": ("shoe", None),
    # carried things
    "backpack": ("carry", "backpack"), "rucksack": ("carry", "backpack"), "knapsack": ("carry", "backpack"),
    "school bag": ("carry", "backpack"), "schoolbag": ("carry", "backpack"), "back pack": ("carry", "backpack"),
    "handbag": ("carry", "handbag"), "purse": ("carry", "handbag"), "tote": ("carry", "handbag"),
    "tote bag": ("carry", "handbag"), "bag": ("carry", "handbag"), "hand bag": ("carry", "handbag"),
    "clutch": ("carry", "handbag"), "clutch bag": ("carry", "handbag"),
    "shoulder bag": ("carry", "shoulder_bag"), "messenger bag": ("carry", "shoulder_bag"),
    "satchel": ("carry", "shoulder_bag"), "crossbody bag": ("carry", "shoulder_bag"),
    "cross body bag": ("carry", "shoulder_bag"), "sling bag": ("carry", "shoulder_bag"),
    "suitcase": ("carry", "suitcase"), "trolley case": ("carry", "suitcase"), "luggage": ("carry", "suitcase"),
    "roller bag": ("carry", "suitcase"), "wheeled case": ("carry", "suitcase"),
    "rolling suitcase": ("carry", "suitcase"),
    "trolley bag": ("carry", "suitcase"), "wheelie case": ("carry", "suitcase"), "wheelie bag": ("carry", "suitcase"),
    "umbrella": ("carry", "umbrella"), "brolly": ("carry", "umbrella"),
    "plastic bag": ("carry", "plastic_bag"), "shopping bag": ("carry", "plastic_bag"),
    "carrier bag": ("carry", "plastic_bag"), "carrier": ("carry", "plastic_bag"),
    "grocery bag": ("carry", "plastic_bag"), "supermarket bag": ("carry", "plastic_bag"),
    # outside the ontology: absorb a colour, state nothing
    **{word: ("sink", None) for word in (
        "suit", "tracksuit", "jumpsuit", "overalls", "uniform", "jersey", "scarf", "gloves", "glove", "mittens",
        "belt", "tie", "socks", "sock", "stockings", "glasses", "sunglasses", "spectacles", "goggles", "mask",
        "watch", "bracelet", "necklace", "earrings", "jewellery", "jewelry", "headphones", "earphones",
        "headband", "bandana", "phone", "bottle", "cup", "bike", "bicycle", "scooter", "stroller", "pram",
        "buggy", "dog", "lead", "leash", "book", "newspaper", "laptop", "camera", "cigarette", "logo", "print",
        "stripes", "stripe", "pattern", "letters", "lettering", "writing", "graphic", "design", "buttons",
        "zip", "zipper", "collar", "pocket", "pockets", "soles", "laces", "strap", "straps", "trim", "lining",
        "frames", "outfit", "outfits", "clothes", "clothing", "attire", "garments", "garment", "car", "van",
        "cane", "stick", "walking stick", "crutches", "wheelchair", "briefcase", "wallet", "box", "parcel",
        "package", "lanyard", "badge", "beard", "moustache", "mustache", "tattoo", "tattoos", "eyes", "face",
        "folder", "file", "coffee cup", "flowers", "guitar", "case", "eyed", "faced", "skateboard", "hatchback",
        "scrubs", "apron", "robe", "cape", "poncho", "shawl", "kimono", "sari", "hijab", "headscarf", "turban",
    )},
}

#: Phrases that always state fixed attributes besides their item ("tank top" is also sleeveless).
ITEM_EXTRAS: dict[str, dict[str, str]] = {
    "tank top": {"top_length": "sleeveless"}, "tank": {"top_length": "sleeveless"},
    "singlet": {"top_length": "sleeveless"}, "camisole": {"top_length": "sleeveless"},
    "miniskirt": {"bottom_length": "short"}, "mini skirt": {"bottom_length": "short"},
}

#: Materials: skipped between a colour and its garment ("black leather jacket"); after a garment they let a
#: colour refer back to it ("a messenger bag, brown leather").
MATERIAL_WORDS: frozenset[str] = frozenset({
    "leather", "suede", "wool", "woollen", "woolen", "wooly", "woolly", "cotton", "linen", "silk", "satin",
    "velvet", "corduroy", "nylon", "canvas", "plastic", "rubber", "tweed", "fur", "faux", "cashmere", "lace",
    "knitted", "fleecy", "waxed", "quilted", "padded", "puffy", "patent", "mesh", "lycra", "spandex",
})

# ----------------------------------------------------------------------------------- person & body words
#: Words naming the person; value = (gender or None, age or None).
PERSON_NOUNS: dict[str, tuple[str | None, str | None]] = {
    "man": ("male", None), "men": ("male", None), "guy": ("male", None), "gentleman": ("male", None),
    "gent": ("male", None), "male": ("male", None), "bloke": ("male", None), "chap": ("male", None),
    "fellow": ("male", None), "dude": ("male", None), "lad": ("male", None), "gentlemen": ("male", None),
    "businessman": ("male", None), "policeman": ("male", None), "father": ("male", None), "dad": ("male", None),
    "husband": ("male", None), "gentleman's": ("male", None), "sir": ("male", None),
    "woman": ("female", None), "women": ("female", None), "lady": ("female", None), "female": ("female", None),
    "gal": ("female", None), "businesswoman": ("female", None), "policewoman": ("female", None),
    "mother": ("female", None), "mum": ("female", None), "mom": ("female", None), "wife": ("female", None),
    "madam": ("female", None), "lass": ("female", None), "ladies": ("female", None),
    "boy": ("male", "child"), "schoolboy": ("male", "child"), "school boy": ("male", "child"),
    "son": ("male", None), "daughter": ("female", None),
    "girl": ("female", "child"), "schoolgirl": ("female", "child"), "school girl": ("female", "child"),
    "kid": (None, "child"), "child": (None, "child"), "toddler": (None, "child"), "children": (None, "child"),
    "youngster": (None, "child"), "kiddo": (None, "child"),
    "grandpa": ("male", "elderly"), "grandfather": ("male", "elderly"), "granddad": ("male", "elderly"),
    "grandad": ("male", "elderly"), "grandma": ("female", "elderly"), "grandmother": ("female", "elderly"),
    "granny": ("female", "elderly"), "gran": ("female", "elderly"), "old man": ("male", "elderly"),
    "old woman": ("female", "elderly"), "old lady": ("female", "elderly"),
    "teenager": (None, "young"), "teen": (None, "young"), "youth": (None, "young"), "student": (None, "young"),
    "adolescent": (None, "young"), "teenage boy": ("male", "young"), "teenage girl": ("female", "young"),
    "teen boy": ("male", "young"), "teen girl": ("female", "young"), "college student": (None, "young"),
    "university student": (None, "young"), "senior": (None, "elderly"), "pensioner": (None, "elderly"),
    "senior citizen": (None, "elderly"), "oap": (None, "elderly"), "retiree": (None, "elderly"),
    "person": (None, None), "individual": (None, None), "pedestrian": (None, None), "someone": (None, None),
    "somebody": (None, None), "adult": (None, None), "people": (None, None), "human": (None, None),
    "suspect": (None, None), "passerby": (None, None), "passer by": (None, None), "figure": (None, None),
    "shopper": (None, None), "commuter": (None, None), "tourist": (None, None), "worker": (None, None),
    "driver": (None, None), "cyclist": (None, None), "thief": (None, None), "stranger": (None, None),
    "customer": (None, None), "walker": (None, None), "jogger": (None, None), "offender": (None, None),
}

#: Subject pronouns / possessives that imply a gender only when no gender noun is present.
GENDER_PRONOUNS: dict[str, str] = {
    "he": "male", "him": "male", "his": "male", "himself": "male",
    "she": "female", "her": "female", "hers": "female", "herself": "female",
}

#: Explicit age words (beside the person nouns above).
AGE_WORDS: dict[str, str] = {
    "young": "young", "teenage": "young", "teenaged": "young", "youthful": "young",
    "middle aged": "middle_aged", "middleaged": "middle_aged",
    "old": "elderly", "elderly": "elderly", "aged": "elderly", "older": "elderly", "aging": "elderly",
    "ageing": "elderly", "little": "child",
}

#: "in his twenties" and similar decade phrases → age.
DECADE_AGES: dict[str, str] = {
    "teens": "young", "twenties": "young", "20s": "young", "thirties": "young", "30s": "young",
    "forties": "middle_aged", "40s": "middle_aged", "fifties": "middle_aged", "50s": "middle_aged",
    "sixties": "elderly", "60s": "elderly", "seventies": "elderly", "70s": "elderly",
    "eighties": "elderly", "80s": "elderly", "nineties": "elderly", "90s": "elderly",
}

#: Height / physique / skin adjectives. ``None`` entries depend on what they modify (parser rules).
HEIGHT_WORDS: dict[str, str] = {"tall": "tall", "short": "short", "towering": "tall"}
PHYSIQUE_WORDS: dict[str, str] = {
    "slim": "slim", "thin": "slim", "skinny": "slim", "slender": "slim", "lean": "slim", "slight": "slim",
    "wiry": "slim", "scrawny": "slim", "bony": "slim", "trim": "slim",
    "heavy": "heavy", "heavyset": "heavy", "fat": "heavy", "overweight": "heavy", "stocky": "heavy",
    "chubby": "heavy", "plump": "heavy", "obese": "heavy", "large": "heavy", "big": "heavy", "portly": "heavy",
    "burly": "heavy", "stout": "heavy", "tubby": "heavy", "hefty": "heavy", "rotund": "heavy", "bulky": "heavy",
    "chunky": "heavy", "podgy": "heavy", "pudgy": "heavy", "beefy": "heavy", "heavily": "heavy",
    "average": "average", "medium": "average", "normal": "average", "regular": "average", "ordinary": "average",
}
#: Of the physique words, these state a physique only next to "build"/"frame"/... (a "big bag" is no body).
PHYSIQUE_NEEDS_BUILD_NOUN: frozenset[str] = frozenset({
    "large", "big", "average", "medium", "normal", "regular", "ordinary", "slight", "trim", "heavily",
})
SKIN_WORDS: dict[str, str] = {
    "light": "light", "fair": "light", "pale": "light", "white": "light", "porcelain": "light",
    "medium": "medium", "olive": "medium", "tan": "medium", "tanned": "medium", "brown": "medium",
    "golden": "medium", "bronzed": "medium", "dark": "dark", "black": "dark", "deep": "dark",
}

#: Hairstyle words that state a hairstyle wherever they appear.
HAIRSTYLE_WORDS: dict[str, str] = {
    "bald": "bald", "balding": "bald", "shaved head": "bald", "shaven head": "bald", "bald head": "bald",
    "hairless": "bald", "buzz cut": "short", "buzzcut": "short", "crew cut": "short",
    "cropped hair": "short", "close cropped hair": "short", "short haircut": "short", "pixie cut": "short",
    "ponytail": "ponytail", "pony tail": "ponytail", "bun": "bun", "top knot": "bun",
    "topknot": "bun", "hair bun": "bun", "shoulder length hair": "medium", "medium length hair": "medium",
    "mid length hair": "medium", "ponytails": "ponytail",
}

# --------------------------------------------------------------------------- generator surface forms
#: Surface forms the generator draws from (each parses back to its key). Nouns ending in "s" are plural.
HAT_FORMS: dict[str, tuple[str, ...]] = {
    "cap": ("cap", "baseball cap", "peaked cap", "cap"),
    "beanie": ("beanie", "woolly hat", "knit hat", "beanie"),
    "brimmed_hat": ("hat", "sun hat", "fedora", "bucket hat", "straw hat", "brimmed hat"),
    "helmet": ("helmet", "helmet"),
    "hood": ("hood",),
}
TOP_FORMS: dict[str, tuple[str, ...]] = {
    "t_shirt": ("t-shirt", "tee", "T-shirt", "t-shirt"),
    "shirt": ("shirt", "button-up shirt", "polo shirt", "shirt"),
    "blouse": ("blouse",),
    "sweater": ("sweater", "jumper", "pullover", "cardigan"),
    "hoodie": ("hoodie", "hooded sweatshirt", "sweatshirt", "hoodie"),
    "jacket": ("jacket", "windbreaker", "blazer", "bomber jacket", "fleece", "jacket"),
    "coat": ("coat", "overcoat", "trench coat", "parka", "raincoat"),
    "vest": ("vest", "waistcoat", "gilet"),
    "dress": ("dress", "dress", "sundress"),
}
BOTTOM_FORMS: dict[str, tuple[str, ...]] = {
    "trousers": ("trousers", "pants", "slacks", "chinos", "trousers"),
    "jeans": ("jeans", "jeans", "denims"),
    "shorts": ("shorts",),
    "skirt": ("skirt",),
    "leggings": ("leggings", "tights", "leggings"),
}
SHOE_FORMS: dict[str, tuple[str, ...]] = {
    "sneakers": ("sneakers", "trainers", "running shoes", "tennis shoes"),
    "boots": ("boots", "ankle boots", "boots"),
    "sandals": ("sandals", "flip-flops", "sandals"),
    "leather_shoes": ("leather shoes", "dress shoes", "loafers", "leather shoes"),
    "high_heels": ("high heels", "heels", "high heels"),
    "slippers": ("slippers",),
}
CARRY_FORMS: dict[str, tuple[str, ...]] = {
    "backpack": ("backpack", "rucksack", "backpack", "school bag"),
    "handbag": ("handbag", "purse", "tote bag", "handbag"),
    "shoulder_bag": ("shoulder bag", "messenger bag", "satchel", "crossbody bag"),
    "suitcase": ("suitcase", "trolley case", "suitcase", "roller bag"),
    "umbrella": ("umbrella",),
    "plastic_bag": ("plastic bag", "shopping bag", "carrier bag"),
}
#: Shades the generator may use for each canonical colour (all in COLOR_WORDS).
COLOR_FORMS: dict[str, tuple[str, ...]] = {
    "red": ("red", "red", "maroon", "scarlet", "crimson", "burgundy"),
    "orange": ("orange", "orange", "coral", "rust", "tangerine"),
    "yellow": ("yellow", "yellow", "mustard", "golden", "lemon"),
    "blue": ("blue", "blue", "navy", "navy blue", "sky blue", "cobalt", "teal"),
    "green": ("green", "green", "olive", "dark green", "emerald", "lime"),
    "purple": ("purple", "purple", "violet", "lavender", "lilac", "plum"),
    "pink": ("pink", "pink", "magenta", "fuchsia", "light pink"),
    "brown": ("brown", "brown", "chocolate", "camel", "dark brown", "tan"),
    "beige": ("beige", "beige", "cream", "khaki", "sand"),
    "white": ("white", "white", "off-white", "snow white"),
    "gray": ("gray", "grey", "grey", "charcoal", "light grey", "silver"),
    "black": ("black", "black", "jet black", "black"),
}
HAIR_COLOR_FORMS: dict[str, tuple[str, ...]] = {
    "black": ("black", "jet black", "black"),
    "brown": ("brown", "dark brown", "light brown", "chestnut"),
    "blonde": ("blonde", "blond", "golden", "platinum blonde"),
    "red": ("red", "ginger", "auburn"),
    "gray": ("gray", "grey", "silver", "grey"),
    "white": ("white", "snow-white", "white"),
}

# ------------------------------------------------------------------------------ nouns of the body
#: Nouns that adjectives describe besides garments and the person. "haired", "skinned", "sleeved",
#: "built" and "bodied" are suffixes: they only take the word right before them ("short-sleeved").
BODY_NOUNS: dict[str, str] = {
    "hair": "hair", "haircut": "hair", "hairstyle": "hair", "hairdo": "hair", "locks": "hair", "head": "hair",
    "haired": "hair", "skin": "skin", "skinned": "skin", "complexion": "skin", "skin tone": "skin",
    "skintone": "skin", "complexioned": "skin", "sleeve": "sleeve", "sleeves": "sleeve", "sleeved": "sleeve",
    "height": "height", "stature": "height", "build": "build", "built": "build", "frame": "build",
    "physique": "build", "figure": "build", "body type": "build", "body shape": "build", "bodied": "build",
    "weight": "build",
}
SUFFIX_NOUNS: frozenset[str] = frozenset({"haired", "skinned", "sleeved", "built", "bodied", "complexioned"})

#: Adjectives whose meaning depends on what they describe: word → {noun class → (key, value)}.
#: Classes: person, hair, skin, sleeve, height, build, the item slots (top, bottom, hat, shoe, carry, sink)
#: and "default" (nothing described: the person, unless the word needs a noun).
ADJECTIVES: dict[str, dict[str, tuple[str, str]]] = {
    "short": {"default": ("height", "short"), "person": ("height", "short"), "height": ("height", "short"),
              "hair": ("hairstyle", "short"), "sleeve": ("top_length", "short_sleeve"),
              "bottom": ("bottom_length", "short")},
    "long": {"hair": ("hairstyle", "long"), "sleeve": ("top_length", "long_sleeve"),
             "bottom": ("bottom_length", "long")},
    "cropped": {"hair": ("hairstyle", "short")}, "close cropped": {"hair": ("hairstyle", "short")},
    "shaved": {"hair": ("hairstyle", "bald")}, "shaven": {"hair": ("hairstyle", "bald")},
    "shoulder length": {"hair": ("hairstyle", "medium"), "default": ("hairstyle", "medium")},
    "medium length": {"hair": ("hairstyle", "medium")}, "mid length": {"hair": ("hairstyle", "medium")},
    "knee length": {"bottom": ("bottom_length", "knee")}, "full length": {"bottom": ("bottom_length", "long")},
    "ankle length": {"bottom": ("bottom_length", "long")}, "floor length": {"bottom": ("bottom_length", "long")},
    "mini": {"bottom": ("bottom_length", "short")}, "half": {"sleeve": ("top_length", "short_sleeve")},
    "little": {"person": ("age", "child")},
}
#: Words that only describe hair: "short, curly hair" reads "short" as the hairstyle despite the comma.
HAIR_TEXTURE_WORDS: frozenset[str] = frozenset({
    "curly", "wavy", "straight", "messy", "spiky", "frizzy", "greasy", "thick", "thinning", "slicked", "neat",
    "tidy", "scruffy", "unkempt", "braided", "permed", "dyed", "shaggy", "floppy", "fluffy", "sleek", "glossy",
})

#: Bottom-length words that, describing nothing, refer back to the last bottom garment ("skirt, knee-length").
BOTTOM_LENGTH_WORDS: frozenset[str] = frozenset({"knee length", "full length", "ankle length", "floor length", "mini"})

# ------------------------------------------------------------------------------------- fixed phrases
#: Phrases that state attributes wherever they appear.
FIXED_PHRASES: dict[str, dict[str, str]] = {
    "sleeveless": {"top_length": "sleeveless"}, "short sleeve": {"top_length": "short_sleeve"},
    "long sleeve": {"top_length": "long_sleeve"}, "half sleeve": {"top_length": "short_sleeve"},
    "half sleeved": {"top_length": "short_sleeve"}, "strapless": {"top_length": "sleeveless"},
    "bareheaded": {"hat_type": "none"}, "bare headed": {"hat_type": "none"}, "hatless": {"hat_type": "none"},
    "empty handed": {"carrying_type": "none"}, "emptyhanded": {"carrying_type": "none"},
    "of average height": {"height": "average"}, "of medium height": {"height": "average"},
    "average sized": {}, "of average build": {"physique": "average"}, "of medium build": {"physique": "average"},
    "middle aged": {"age": "middle_aged"}, "middleaged": {"age": "middle_aged"},
    "senior citizen": {"age": "elderly"},
    "heavy set": {"physique": "heavy"}, "heavily built": {"physique": "heavy"},
    "slightly built": {"physique": "slim"}, "slight build": {"physique": "slim"},
    "clean shaven": {}, "well built": {}, "well dressed": {},
}

# ------------------------------------------------------------------------------------ function words
BE_WORDS: frozenset[str] = frozenset({
    "is", "are", "was", "were", "be", "been", "being", "am", "look", "looks", "looked", "appear", "appears",
    "appeared", "seem", "seems", "seemed", "remains", "remained",
})
NEGATION_WORDS: frozenset[str] = frozenset({"no", "not", "without", "never", "nor", "neither", "none"})
NOTHING_WORDS: frozenset[str] = frozenset({"nothing", "anything"})
RELATIVE_WORDS: frozenset[str] = frozenset({"that", "which", "who", "whom"})
CLAUSE_WORDS: frozenset[str] = frozenset({
    "and", "or", "but", "plus", "while", "whereas", "although", "though", "yet", "then", "so", "whose", "whilst",
})
DETERMINERS: frozenset[str] = frozenset({
    "a", "an", "the", "this", "these", "those", "some", "any", "each", "every", "my", "your", "our", "its",
    "their", "his", "her", "pair", "of", "another", "other", "same",
})
ADVERBS: frozenset[str] = frozenset({
    "very", "quite", "rather", "fairly", "pretty", "really", "relatively", "somewhat", "slightly", "extremely",
    "bit", "kind", "sort", "mostly", "mainly", "all", "both", "entirely", "completely", "also", "too",
    "noticeably", "maybe", "probably", "possibly", "approximately", "approx", "about", "around", "perhaps",
    "definitely", "certainly", "just", "fully", "properly", "super", "reasonably", "moderately", "particularly",
    "unusually", "exceptionally", "incredibly", "totally", "like", "more", "less", "much", "still",
    "almost", "nearly", "roughly", "kinda", "sorta", "overall", "generally", "clearly", "obviously",
})
WEAR_VERBS: frozenset[str] = frozenset({
    "wearing", "wear", "wears", "wore", "worn", "dressed", "has", "have", "had", "having", "got", "sporting",
    "sports", "donning",
})
CARRY_VERBS: frozenset[str] = frozenset({
    "carrying", "carry", "carries", "carried", "holding", "hold", "holds", "held", "pulling", "pulls", "pulled",
    "dragging", "drags", "dragged", "wheeling", "wheels", "toting", "clutching", "clutches", "lugging",
    "pushing", "pushes", "pushed", "hauling",
})
PREPOSITIONS: frozenset[str] = frozenset({
    "on", "at", "in", "of", "to", "from", "by", "over", "under", "with", "near", "behind", "across", "towards",
    "toward", "into", "for", "about", "around", "past", "through", "outside", "inside", "up", "down", "off",
    "underneath", "beneath", "above", "below", "beside", "next", "along", "onto", "out", "against", "between",
})
#: Pronouns; subject pronouns referring to the person vs. to a thing.
PERSON_PRONOUNS: frozenset[str] = frozenset({"he", "she", "they", "him", "them", "i", "you", "we", "someone"})
THING_PRONOUNS: frozenset[str] = frozenset({"it", "its"})
#: Words after which "old" does not mean elderly ("30 years old").
YEAR_WORDS: frozenset[str] = frozenset({"year", "years", "yr", "yrs", "yo"})
#: Abbreviations whose full stop does not end a sentence.
ABBREVIATIONS: frozenset[str] = frozenset({"approx", "e", "g", "i", "etc", "mr", "mrs", "ms", "dr", "st", "vs", "ca"})
#: Phrases after a colour that place it on the top / bottom without naming a garment ("red on top").
COLOR_PLACES: dict[str, str] = {
    "on top": "top", "up top": "top", "on the top": "top", "on the upper body": "top", "on his upper body": "top",
    "on her upper body": "top", "on their upper body": "top", "on the bottom": "bottom", "on bottom": "bottom",
    "on the lower body": "bottom", "on his lower body": "bottom", "on her lower body": "bottom",
    "on their lower body": "bottom", "down below": "bottom",
}
