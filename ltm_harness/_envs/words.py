"""The built-in word list of the cipher test: common English nouns and adjectives, 4 to 9 letters.

A `config` folder with a `words.txt` (one word per line) replaces it.
"""

WORDS: tuple[str, ...] = tuple("""
apple basket bread bridge candle carpet castle cloud coffee cookie copper cotton
desert dinner dragon engine farmer feather finger flower forest garden ginger glass
guitar hammer harbor helmet honey island jacket jungle kettle ladder lemon letter
lizard magnet marble meadow mirror monkey needle noodle orange oyster paddle pencil
pepper pillow pirate planet pocket potato puzzle rabbit ribbon river rocket saddle
salmon shadow silver sister spider spoon summer sunset tablet teapot thunder ticket
tiger tomato tunnel turtle valley velvet violin walnut window winter wizard yellow
anchor badge barrel beacon blanket bottle branch bucket button cabin camera canyon
carrot cherry chimney circle clover collar comet corner cradle crayon crystal dolphin
donkey drawer eagle falcon fence fiddle forge fossil frame garlic giant goblet
gravel hollow hunter jelly jewel kitten lantern lobster locket mango mitten mustard
nickel nugget olive palace parrot peach pebble pigeon plum pony quilt radish
raven saucer scarf shovel signal spinach statue stove sugar tailor tavern thistle
timber torch towel tulip umbrella vessel wagon whistle willow yogurt zebra acorn
almond amber arrow autumn bamboo banjo beetle biscuit blossom bonnet boulder bramble
buffalo cactus canvas cedar cello chalk cobalt cocoa coral cricket cypress daisy
denim ember fabric ferret flint fountain gazelle glacier granite harvest hazel
heron iris ivory jasmine juniper kayak kernel lagoon lilac linen maple marsh
melon meteor muffin nectar oatmeal orchid otter panther pastry pelican
pewter pickle pine plaster poppy pumpkin quartz raisin reed rhubarb saffron
sapphire satin sequoia sorrel spruce squash sparrow tangerine thimble tortoise
trumpet tundra walrus wheat wicker yarn zinc
""".split())
