"""The numpy forward pass over SmolLM2's GGUF: it is the model (it answers), and it scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from turnscope._exceptions import ConfigError
from turnscope.language import SmallLM, _lm, model_path
from turnscope.language._lm import _shared_prefix


@pytest.fixture(scope="module")
def lm() -> SmallLM:
    return SmallLM.load()


def test_model_ships_in_an_installed_package() -> None:
    assert model_path().suffix == ".gguf"


def test_missing_package_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="no_such_model_pkg"):
        model_path("no_such_model_pkg")


def test_greedy_answer_is_the_models(lm: SmallLM) -> None:
    prompt = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
    assert "Paris" in lm.generate(prompt, 12)


def test_in_context_score_prefers_the_person_for_a_person_question(lm: SmallLM) -> None:
    ctx = ("<|im_start|>user\nWho directed the film Parasite?<|im_end|>\n<|im_start|>assistant\n"
           "Parasite (2019) was directed by Bong Joon-ho. It won the Palme d'Or at Cannes.<|im_end|>\n"
           "<|im_start|>user\nMy next question, rewritten to stand alone:")
    scores = lm.score(ctx, [" How old is Bong Joon-ho?", " How old is Cannes?"])
    assert scores[0].logprob > scores[1].logprob
    assert all(s.tokens > 0 and s.logprob < 0 for s in scores)


def test_shared_prefix_moves_into_the_context_without_changing_scores(lm: SmallLM) -> None:
    ctx = "<|im_start|>user\nName a fruit.<|im_end|>\n<|im_start|>assistant\n"
    both = lm.score(ctx, [" I like apples", " I like bananas"])
    alone = [lm.score(ctx, [" I like apples"])[0], lm.score(ctx, [" I like bananas"])[0]]
    # alone, each candidate is its own shared prefix: nothing moves, yet the difference is
    # the same (the shared words add the same log-probability to both)
    assert both[0].logprob - both[1].logprob == pytest.approx(alone[0].logprob - alone[1].logprob, abs=0.05)


def test_shared_prefix_cuts_before_a_space() -> None:
    assert _shared_prefix(["how old was she", "how old was Kahlo"]) == "how old was"
    assert _shared_prefix(["abc", "xyz"]) == ""


def test_packed_candidates_do_not_see_each_other(lm: SmallLM) -> None:
    # the candidates run as one packed sequence: a candidate's score must not depend on which
    # other candidates share the pass, nor on their number or length
    ctx = "<|im_start|>user\nWho painted the Mona Lisa?<|im_end|>\n<|im_start|>assistant\n"
    a = " Leonardo da Vinci painted it."
    first = lm.score(ctx, [a, " Monet."])[0]
    last = lm.score(ctx, [" It was painted in Florence around 1503 by a master.", " Raphael.", a])[2]
    assert first.logprob == pytest.approx(last.logprob, abs=1e-3)


def test_packed_score_is_the_causal_log_probability(lm: SmallLM) -> None:
    # the same tokens run through the plain causal pass, token by token, give the same sum
    import numpy as np

    ctx = "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n"
    cand = " Blue, like the sea."
    ids = lm.encode(ctx) + lm.encode(cand)
    n_ctx, n = len(lm.encode(ctx)), len(ids)
    hidden, _ = lm._forward(np.asarray(ids), np.arange(n), np.triu(np.full((n, n), -np.inf, np.float32), 1), None)
    rows = np.arange(n_ctx - 1, n - 1)
    expected = lm._token_logprobs(hidden, rows, np.asarray(ids[n_ctx:])).sum()
    got = lm.score(ctx, [cand, " Red."])[0]
    assert got.tokens == n - n_ctx
    assert got.logprob == pytest.approx(float(expected), abs=1e-3)


def test_a_repeated_scoring_is_answered_from_the_cache(lm: SmallLM, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = "<|im_start|>user\nName a river.<|im_end|>\n<|im_start|>assistant\n"
    first = lm.score(ctx, [" The Nile.", " The Rhine."])
    calls: list[int] = []
    real = lm._score
    monkeypatch.setattr(lm, "_score", lambda c, cands: calls.append(1) or real(c, cands))
    again = lm.score(ctx, [" The Nile.", " The Rhine."])
    assert again == first and calls == []
    lm.score(ctx, [" The Rhine.", " The Nile."])  # another order is another question
    assert calls == [1]


def _same_model(a: SmallLM, b: SmallLM) -> bool:
    arrays = [(a.embed, b.embed), (a.out_head, b.out_head), (a.out_norm, b.out_norm),
              *((u, v) for la, lb in zip(a.layers, b.layers, strict=True) for u, v in zip(la, lb, strict=True))]
    return all(np.array_equal(u, v) for u, v in arrays) and (a.name, a.n_layer, a.eps) == (b.name, b.n_layer, b.eps)


def test_a_second_load_is_the_same_model(lm: SmallLM) -> None:
    second = SmallLM.load()
    assert _same_model(lm, second)
    text = "Who painted the Mona Lisa in 1503? ルーブル <|im_end|>"
    assert lm.encode(text) == second.encode(text)
    ctx, candidates = "Q: Who wrote Hamlet?\nA:", [" Shakespeare", " Dickens"]
    assert second.score(ctx, candidates) == lm.score(ctx, candidates)


def test_the_header_reader_gives_what_the_gguf_package_reads() -> None:
    from gguf import GGUFReader

    reader = GGUFReader(str(model_path()))
    fields, tensors = _lm._read_gguf(model_path())
    expected = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    assert fields == expected and len(fields) > 20 and len(fields["tokenizer.ggml.tokens"]) == 49152
    assert tensors == [{"name": t.name, "type": int(t.tensor_type), "offset": int(t.data_offset),
                        "dtype": t.data.dtype.str, "shape": [int(n) for n in t.data.shape]}
                       for t in reader.tensors]


def test_a_file_that_is_not_gguf_is_a_config_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "weights.gguf"
    bad.write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(ConfigError, match="weights.gguf is not a GGUF file"):
        _lm._read_gguf(bad)


def test_whole_tensor_dequantization_gives_the_gguf_packages_values() -> None:
    from gguf import GGUFReader
    from gguf.quants import dequantize

    reader = GGUFReader(str(model_path()))
    kinds = set()
    for t in reader.tensors:
        kinds.add(t.tensor_type)
        assert np.array_equal(_lm._dequantize(t.data, t.tensor_type), dequantize(t.data, t.tensor_type)), t.name
    assert len(kinds) >= 2  # quantized blocks and plain floats both went through


def test_the_forward_pass_runs_on_one_blas_thread_and_restores_the_callers(
        lm: SmallLM, monkeypatch: pytest.MonkeyPatch) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> list[int]:
        # numpy's own BLAS (the forward pass's); another library may load one of its own
        # (scipy's OpenBLAS), which the forward pass never calls
        return [int(i["num_threads"]) for i in threadpool_info()
                if i["user_api"] == "blas" and "numpy" in i["filepath"]]

    seen: list[list[int]] = []
    real = lm._forward
    monkeypatch.setattr(lm, "_forward", lambda *a: seen.append(blas_threads()) or real(*a))
    with threadpool_limits(limits=2, user_api="blas"):
        lm.clear_cache()
        lm.score("Q: Who wrote Hamlet?\nA:", [" Shakespeare", " Dickens"])
        lm.generate("Hello", 1)
        after = blas_threads()
    assert seen and all(t == [1] * len(t) and t for t in seen)
    assert after and all(n == 2 for n in after)
