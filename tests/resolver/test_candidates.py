from turnscope.resolver import HistoryTurn, candidates
from turnscope.resolver._candidates import key_of, sentences


def _h(*turns: tuple[str, str]) -> list[HistoryTurn]:
    return [HistoryTurn(i + 1, role, text) for i, (role, text) in enumerate(turns)]


def test_chunks_are_noun_phrases_not_verbs_or_function_words() -> None:
    cands = candidates(_h(("user", "What are the types of breast cancer?"),
                          ("assistant", "Ductal carcinoma begins in the milk duct.")))
    texts = {c.text for c in cands}
    assert {"breast cancer", "Ductal carcinoma", "milk duct"} <= texts
    assert not any(t.split()[0].lower() in {"the", "of", "what", "begins"} for t in texts)


def test_capitalised_name_keeps_its_glue_words() -> None:
    cands = candidates(_h(("assistant", "The band was called the Mothers of Invention.")))
    assert "Mothers of Invention" in {c.text for c in cands}


def test_mentions_merge_by_stem_and_keep_every_turn() -> None:
    cands = candidates(_h(("user", "Tell me about sharks."), ("assistant", "A shark is a fish."),
                          ("user", "Are sharks endangered?")))
    shark = next(c for c in cands if c.key == key_of("shark"))
    assert {m.turn for m in shark.mentions} == {1, 2, 3}
    assert shark.last.turn == 3 and shark.last.role == "user"


def test_list_items_are_marked() -> None:
    cands = candidates(_h(("assistant", "Options:\n1. Acer Aspire 5\n2. Lenovo IdeaPad 3")))
    listed = {c.text for c in cands if any(m.in_list for m in c.mentions)}
    assert {"Acer Aspire 5", "Lenovo IdeaPad 3"} <= listed


def test_sentences_split_on_ends_and_lines() -> None:
    assert sentences("One. Two is here!\n- three") == ["One.", "Two is here!", "- three"]


def test_candidates_are_bounded() -> None:
    long = " ".join(f"Name{i} Thing{i}." for i in range(400))
    assert len(candidates(_h(("assistant", long)), max_candidates=50)) == 50


def test_a_chunk_ends_in_its_noun_not_in_its_predicate() -> None:
    texts = [c.text for c in candidates(_h(("user", "Is Red Bull bad for you?"),
                                           ("user", "What is Chattanooga famous for?"),
                                           ("user", "Why was the Milgram experiment important?")))]
    assert {"Red Bull", "Chattanooga", "Milgram experiment"} <= set(texts)
    assert not any(t.endswith(("bad", "famous", "important")) for t in texts)


def test_a_mention_knows_its_chunk_position_in_the_sentence() -> None:
    cands = candidates(_h(("user", "Fleet Foxes — Formation")))
    position = {c.text: c.mentions[0].position for c in cands}
    assert position == {"Fleet Foxes": 0, "Formation": 1}


def test_a_turn_is_chunked_once_and_the_cache_changes_nothing() -> None:
    from turnscope.resolver._candidates import _turn_chunks, clear_text_caches

    answer = ("Ductal carcinoma is the most common type. Lobular carcinoma starts in the lobules."
              "\n1. Inflammatory breast cancer\n2. Paget disease")
    history = [HistoryTurn(1, "user", "What are the types of breast cancer?"),
               HistoryTurn(2, "assistant", answer)]
    clear_text_caches()
    cold = candidates(history)
    misses = _turn_chunks.cache_info().misses
    warm = candidates([*history, HistoryTurn(3, "user", "Which is the most common?")])
    # the two earlier turns came from the cache; only the new one was chunked
    assert _turn_chunks.cache_info().misses == misses + 1
    assert [(c.text, c.key, c.capitalised, c.mentions) for c in warm
            if all(m.turn < 3 for m in c.mentions)] == [(c.text, c.key, c.capitalised, c.mentions) for c in cold]
    clear_text_caches()
    assert _turn_chunks.cache_info().currsize == 0


def test_candidates_of_the_same_turns_are_built_anew_each_time() -> None:
    # a turn's mentions are cached; the candidates merged from them are not shared
    from turnscope.resolver import HistoryTurn as H

    hist = [H(1, "user", "What are the types of breast cancer?"),
            H(2, "assistant", "Ductal carcinoma and lobular carcinoma.")]
    first = candidates(hist)
    first[0].mentions.clear()
    again = candidates(hist)
    assert [c.text for c in again] == ["lobular carcinoma", "Ductal carcinoma", "breast cancer", "types"]
    assert all(c.mentions for c in again)


def test_a_name_with_an_accent_is_one_phrase() -> None:
    # an ASCII word class cut "González" into "Gonz" and "lez": a fragment in the query
    texts = [c.text for c in candidates([HistoryTurn(1, "user", "Juan González (baseball) — Biography"),
                                         HistoryTurn(2, "assistant", "He grew up near São Paulo.")])]
    assert "Juan González" in texts and "São Paulo" in texts
    assert not any(t in ("Juan Gonz", "lez", "S", "o Paulo") for t in texts)


def test_other_scripts_do_not_become_one_long_word() -> None:
    texts = [c.text for c in candidates([HistoryTurn(1, "user", "東京タワーの高さは？ Tokyo Tower is tall")])]
    assert "Tokyo Tower" in texts
    assert all(t.isascii() for t in texts)  # the Japanese is not read as a word


def test_a_name_keeps_words_that_are_also_function_words_or_verbs() -> None:
    # a capitalised word inside a name belongs to it ("May", "He", "Show"), a name may open
    # a heading ("Bill W.", "Talking Heads"), and an initial stays in its name
    def texts(t: str) -> list[str]:
        return [c.text for c in candidates([HistoryTurn(1, "user", t)])]

    assert "Bill W." in texts("Bill W. — Marriage, work, and alcoholism")
    assert "Talking Heads" in texts("Talking Heads — 1981-1991: Height of commercial success")
    assert "Zheng He" in texts("Zheng He — Early life and family")
    assert "James May" in texts("What did James May present?")
    assert "Daily Show" in texts("Who hosted The Daily Show?")
    # sentence-initial verbs and question words still open nothing
    assert texts("Tell me about sharks.") == ["sharks"]
    assert texts("Is it safe for children?") == ["children", "safe"]


def test_an_initial_keeps_its_stop_and_its_name() -> None:
    # the stop after an initial ends neither the sentence nor the name
    h = _h(("assistant", "George W. Bush was elected in 2000. He served two terms."))
    assert "George W. Bush" in {c.text for c in candidates(h)}
    assert sentences("George W. Bush was elected in 2000. He served two terms.") == [
        "George W. Bush was elected in 2000.", "He served two terms."]
    # a stop after a whole word still ends the sentence
    assert len(sentences("They toured Portugal. The band came back in May.")) == 2


def test_a_phrase_that_opened_a_sentence_keeps_how_it_is_written_elsewhere() -> None:
    h = [HistoryTurn(1, "user", "What is throat cancer?"),
         HistoryTurn(2, "assistant", "Throat cancer is cancer of the pharynx.")]
    texts = {c.text for c in candidates(h)}
    assert "throat cancer" in texts and "Throat cancer" not in texts


def test_a_name_that_opened_a_sentence_stays_a_name() -> None:
    h = [HistoryTurn(1, "user", "Where was Dublin founded?"),
         HistoryTurn(2, "assistant", "Dublin was founded by the Vikings.")]
    assert "Dublin" in {c.text for c in candidates(h)}
