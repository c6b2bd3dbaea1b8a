from turnscope.resolver import realize


def test_pronoun_is_substituted() -> None:
    assert realize("How deadly is it?", ["lobular carcinoma"]) == (
        "How deadly is lobular carcinoma?", ["lobular carcinoma"])


def test_possessive_pronoun_takes_apostrophe_s() -> None:
    q, carried = realize("What is their best album?", ["the Grateful Dead"])
    assert q == "What is the Grateful Dead's best album?"
    assert carried == ["the Grateful Dead"]


def test_sentence_initial_substitution_is_capitalised() -> None:
    assert realize("they split up when?", ["zappa"])[0] == "Zappa split up when?"


def test_without_pronoun_phrases_attach_before_the_question_mark() -> None:
    assert realize("What about the side effects?", ["tamoxifen"]) == (
        "What about the side effects (tamoxifen)?", ["tamoxifen"])


def test_determiner_that_is_not_a_pronoun() -> None:
    q, _ = realize("Is that treatment safe?", ["tamoxifen"])
    assert q == "Is that treatment safe (tamoxifen)?"


def test_nothing_carried_leaves_the_message_alone() -> None:
    assert realize("  Is the billing export API paginated?  ", []) == (
        "Is the billing export API paginated?", [])


def test_the_message_is_never_cut() -> None:
    msg = "Why did it stop, and what did the critics say?"
    q, _ = realize(msg, ["the tour", "1969"])
    assert "what did the critics say" in q and "the tour" in q and "1969" in q


def test_a_personal_pronoun_is_not_replaced_by_a_common_noun() -> None:
    # "he" refers to a person: a phrase with no capitalised word cannot name one, and
    # attaching it instead would add the same wrong word, so nothing is carried
    assert realize("Did he plead guilty to the charge?", ["controversy"]) == (
        "Did he plead guilty to the charge?", [])
    assert realize("What are his best known works?", ["surrealism", "Dali"]) == (
        "What are his best known works?", [])
    assert realize("Where did she study?", ["Marie Curie"]) == ("Where did Marie Curie study?",
                                                                ["Marie Curie"])


def test_it_and_they_take_any_phrase() -> None:
    assert realize("Why are they banned?", ["steroids"])[0] == "Why are steroids banned?"
    assert realize("Is it contagious?", ["strep throat"])[0] == "Is strep throat contagious?"


def test_what_the_caller_knows_of_a_name_decides() -> None:
    # "Influence" is capitalised only as a section heading: the resolver says it is no name
    assert realize("Who did he perform with?", ["Influence"], [False]) == (
        "Who did he perform with?", [])
    assert realize("Who did he perform with?", ["Van Morrison"], [True])[0] == \
        "Who did Van Morrison perform with?"
    assert realize("Is it popular?", ["Influence"], [False])[0] == "Is Influence popular?"


def test_a_plural_pronoun_stands_for_the_first_two_phrases() -> None:
    # "their symptoms" after "throat cancer ... esophageal cancer" asks about both
    assert realize("What's the difference in their symptoms?", ["throat cancer", "esophageal cancer"]) == (
        "What's the difference in throat cancer and esophageal cancer's symptoms?",
        ["throat cancer", "esophageal cancer"])
    assert realize("How do they compare?", ["vegan", "vegetarian", "protein"])[0] == \
        "How do vegan and vegetarian compare (protein)?"
    # a singular pronoun takes one phrase; the others attach
    assert realize("How is it treated?", ["lobular carcinoma", "LCIS"])[0] == \
        "How is lobular carcinoma treated (LCIS)?"


def test_a_phrase_another_carried_phrase_extends_goes() -> None:
    # "binge drinking" says all that "drinking" says: the wider phrase takes its place
    assert realize("Are there any benefits?", ["drinking", "binge drinking"]) == (
        "Are there any benefits (binge drinking)?", ["binge drinking"])
    assert realize("Why was it ended?", ["experiment", "BBC experiment"]) == (
        "Why was BBC experiment ended?", ["BBC experiment"])
    # what the caller knows of a name follows the phrase that is kept
    assert realize("Did he resign?", ["Bill", "Bill Clinton"], [False, True])[0] == "Did Bill Clinton resign?"
    # phrases that share a word but neither extends the other both stay
    assert realize("Is it safe?", ["Milgram experiment", "Stanford experiment"])[0] == \
        "Is Milgram experiment safe (Stanford experiment)?"
