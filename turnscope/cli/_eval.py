"""``turnscope eval`` (the command-line contract of the README): the stratified evaluation harness on the command line.

The lead's app calls :func:`register`; nothing here runs at import time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from turnscope._exceptions import TurnscopeError
from turnscope.cli._common import check_timeout, load_vocabulary, make_cli_rewriter
from turnscope.cli._llm_opts import MaxTokensOption, SystemRoleOption
from turnscope.scope import SEGMENT_DEFAULT_DETECTOR, SEGMENT_DETECTORS, parse_policy, policy_grammar

__all__ = ["DATASET_CHOICES", "DEFAULT_DATASET", "TOPIC_DATASETS", "eval_command", "register"]

#: the follow-up set evaluated when ``--dataset`` is not given
DEFAULT_DATASET = "bundled"
#: public sets scored on topic-shift detection instead of rewrites
TOPIC_DATASETS = ("topiocqa", "tiage")
#: dataset names besides a path to a JSONL file of follow-up items
DATASET_CHOICES = (DEFAULT_DATASET, "cast2019", "cast2020", *TOPIC_DATASETS)


#: ``--policies`` help, generated from the policy parser's grammar
POLICIES_HELP = (f"Comma-separated scope policies, e.g. full,window:2,segment:flag,default; each one of "
                 f"{policy_grammar()}. For topiocqa/tiage: the segment detectors to score "
                 f"({', '.join(f'segment:{d}' for d in SEGMENT_DETECTORS)}; default: all).")


def _bad(message: str, hint: str | None = None) -> typer.BadParameter:
    return typer.BadParameter(message, param_hint=hint)


def _split_policies(spec: str) -> list[str]:
    names = [p.strip() for p in spec.split(",") if p.strip()]
    if not names:
        raise _bad("name at least one policy, e.g. --policies full,window:2,default",
                   "--policies")
    return list(dict.fromkeys(names))


def _load_dataset(dataset: str, data_root: Path | None, limit: int | None,
                  with_baselines: bool = True,
                  ) -> tuple[list[Any], dict[str, list[str]] | None, bool, str]:
    """(items, baselines, history_only, label) for a follow-up dataset; the baselines are
    the set's own (CAsT) or the query baselines every set gets, ``None`` without them."""
    from turnscope._items import FollowUpItem, load_items
    from turnscope.evaluation import bundled_items, query_baselines

    if dataset in ("cast2019", "cast2020"):
        from turnscope.datasets import cast_baselines, load_cast

        raw = load_cast(int(dataset[4:]), data_root)
        raw = raw[:limit] if limit else raw
        items: list[Any] = [FollowUpItem.model_validate(d) for d in raw]
        # docs/benchmarks.md: the project's rewrites beside the set's own baselines
        return (items, cast_baselines(raw) if with_baselines else None, True,
                f"TREC CAsT {dataset[4:]}")
    if dataset == DEFAULT_DATASET:
        items, label = bundled_items(), "bundled follow-up set"
    else:
        path = Path(dataset)
        if not path.is_file():
            raise _bad(f"{dataset!r} is neither a file nor one of {', '.join(DATASET_CHOICES)}",
                       "--dataset")
        items, label = load_items(path), str(path)
    items = items[:limit] if limit else items
    return items, query_baselines(items) if with_baselines and items else None, False, label


def _topic_detectors(policies: str) -> tuple[str, ...]:
    """Segment detectors named by ``--policies`` (``segment:learned`` or ``segment-learned``
    -> ``learned``, bare ``segment`` -> its default detector); the option's default
    (``default``) means every detector."""
    from turnscope.evaluation import DEFAULT_DETECTORS

    names = _split_policies(policies)
    if names == ["default"]:
        return DEFAULT_DETECTORS
    detectors: list[str] = []
    for name in names:
        spec = parse_policy(name)  # a malformed spec is the parser's error, as everywhere
        detector = spec.argument if spec.argument is not None else SEGMENT_DEFAULT_DETECTOR
        if spec.name != "segment" or detector not in DEFAULT_DETECTORS:
            raise _bad(f"topic-shift sets score segment detectors, not {name!r}; valid: "
                       + ", ".join(f"segment:{d}" for d in DEFAULT_DETECTORS), "--policies")
        detectors.append(str(detector))
    return tuple(dict.fromkeys(detectors))


def _topic(dataset: str, data_root: Path | None, limit: int | None, resamples: int, seed: int,
           json_out: Path | None, out: Console, err: Console,
           detectors: Sequence[str] | None = None) -> None:
    import json

    from turnscope.datasets import load_tiage, load_topiocqa
    from turnscope.evaluation import DEFAULT_DETECTORS, print_detection, topic_shift_eval

    convs = load_topiocqa(data_root) if dataset == "topiocqa" else load_tiage(data_root)
    convs = convs[:limit] if limit else convs
    label = "TopiOCQA dev" if dataset == "topiocqa" else "TIAGE dev"
    scores = topic_shift_eval(convs, detectors or DEFAULT_DETECTORS, resamples=resamples,
                              seed=seed, console=err, progress=err.is_terminal)
    print_detection(scores, f"{label} ({len(convs)} conversations)", out)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps({"dataset": label, "conversations": len(convs),
                                        "detectors": [s.to_json() for s in scores]}, indent=1),
                            encoding="utf-8")


def eval_command(
    dataset: Annotated[str, typer.Option(
        help="'bundled' (the shipped follow-up set), 'cast2019', 'cast2020', 'topiocqa', "
             "'tiage', or a JSONL file of follow-up items.")] = DEFAULT_DATASET,
    policies: Annotated[str, typer.Option(help=POLICIES_HELP)]
    = "default",
    report: Annotated[Path | None, typer.Option(
        help="Write a self-contained HTML report here (and a PNG of the main chart beside "
             "it when matplotlib is installed).")] = None,
    gate: Annotated[str | None, typer.Option(
        help="A gate TOML file of per-stratum floors, or 'default' for the project's gate. "
             "Exit code 1 when a stratum misses a bound.")] = None,
    compare: Annotated[tuple[str, str] | None, typer.Option(
        help="Two policies A B: decompose the change in the mean into stratum delta x "
             "share.")] = None,
    rewriter: Annotated[str, typer.Option(help="embedded or llm.")] = "embedded",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL (llm).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (llm).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per LLM call.",
                                           callback=check_timeout)] = 10.0,
    max_tokens: MaxTokensOption = None,
    system_role: SystemRoleOption = "auto",
    data_root: Annotated[Path | None, typer.Option(
        help="Folder of the public data sets (default: $TURNSCOPE_DATA or ../shared/data).")]
    = None,
    retriever: Annotated[str, typer.Option(help="hybrid, bm25 or dense.")] = "hybrid",
    corpus: Annotated[str | None, typer.Option(
        help="Retrieve every item from this corpus (a JSONL file, a folder of .md/.txt, or a "
             "bundled name) instead of the bundled corpus of its language.")] = None,
    vocabulary: Annotated[str | None, typer.Option(
        help="Entity vocabulary: none, bundled, bundled:cloud, bundled:ja-site or a JSON file "
             "(default: bundled for the bundled set, which is written in those vocabularies; "
             "none for any other set).")] = None,
    limit: Annotated[int | None, typer.Option(
        min=1, help="Evaluate only the first N items (conversations for topic sets).")] = None,
    resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Write every record and figure as JSON here.")] = None,
    detail: Annotated[bool, typer.Option(
        "--detail", help="Print every figure per stratum too, not only the summary (the "
                         "report and the JSON always hold them).")] = False,
    baselines: Annotated[bool, typer.Option(
        "--baselines/--no-baselines",
        help="Score query baselines beside the policies (the raw message, the previous user "
             "turn prepended, the whole history prepended; CAsT: its own).")] = True,
    rewrites: Annotated[Path | None, typer.Option(
        help='Your own rewrites, scored beside the policies with the same checks, '
             'intervals, report and gate: a JSONL file with one {"id": ..., "query": ...} '
             "per item of the set (docs/benchmarks.md).")] = None,
) -> None:
    """Score scope policies and query baselines (recall@k, MRR, contamination, coverage and
    their input twins), each with a bootstrap 95% interval: a summary of the means, per stratum
    with --detail, the report and the JSON.

    Example: turnscope eval --policies full,window:2,default --report report.html --gate default

    Your own rewriter: turnscope eval --rewrites mine.jsonl --gate default
    """
    out = Console()
    err = Console(stderr=True)
    try:
        if dataset in TOPIC_DATASETS:
            # detection sets always print their one table per set, so --detail is moot there
            for flag, value in (("--report", report), ("--gate", gate), ("--compare", compare),
                                ("--corpus", corpus)):
                if value is not None:
                    raise _bad(f"{flag} applies to follow-up sets, not to the topic-shift set "
                               f"{dataset!r}", flag)
            _topic(dataset, data_root, limit, resamples, seed, json_out, out, err,
                   _topic_detectors(policies))
            return
        _run_followups(dataset, policies, report, gate, compare, rewriter, base_url, model,
                       timeout, data_root, retriever, corpus, vocabulary, limit, resamples, seed,
                       json_out, out, err, max_tokens=max_tokens, system_role=system_role,
                       detail=detail, with_baselines=baselines, rewrites=rewrites)
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None


def _run_followups(dataset: str, policies: str, report: Path | None, gate: str | None,
                   compare: tuple[str, str] | None, rewriter: str, base_url: str | None,
                   model: str | None, timeout: float, data_root: Path | None, retriever: str,
                   corpus: str | None, vocabulary: str | None, limit: int | None,
                   resamples: int, seed: int, json_out: Path | None, out: Console,
                   err: Console, *, max_tokens: int | None = None,
                   system_role: str = "auto", detail: bool = False,
                   with_baselines: bool = True, rewrites: Path | None = None) -> None:
    from turnscope.evaluation import (
        DEFAULT_COMPARE_METRICS,
        EvalConfig,
        check_gate,
        decompose,
        load_gate,
        print_decomposition,
        print_summary,
        print_tables,
        run_eval,
        write_html,
        write_json,
        write_png,
    )
    from turnscope.retrieval import bundled_corpus, bundled_corpus_names, load_corpus

    names = _split_policies(policies)
    if compare is not None:
        # a comparison needs both sides measured; evaluating them is less surprising
        # than refusing
        names += [p for p in compare if p not in names]
    # the gate is read first: a typo in it should not cost a full evaluation
    gate_obj = load_gate(gate) if gate is not None else None
    items, baselines, history_only, label = _load_dataset(dataset, data_root, limit,
                                                          with_baselines)
    if not items:
        raise _bad(f"{label} holds no follow-up items", "--dataset")
    judged: list[str] | None = None
    if rewrites is not None:
        from turnscope._items import load_rewrites
        from turnscope.evaluation import YOURS

        # read before any rewriting: a wrong id should not cost a full evaluation
        baselines = {**(baselines or {}), YOURS: load_rewrites(rewrites, [it.id for it in items])}
        judged = [*names, f"baseline:{YOURS}"]
    # the bundled set declares its own vocabularies (its conversations are about the
    # shipped cloud and Japanese-site domains); any other set gets none unless named
    vocab = load_vocabulary(vocabulary if vocabulary is not None
                            else ("bundled" if dataset == DEFAULT_DATASET else "none"))
    corp = None
    if corpus is not None:
        corp = (bundled_corpus(corpus) if corpus in bundled_corpus_names()
                else load_corpus(corpus))
    config = EvalConfig(policies=tuple(names), retriever=retriever, corpus=corp,
                        vocabulary=vocab, resamples=resamples, seed=seed,
                        history_only=history_only)
    rw = make_cli_rewriter(rewriter, base_url, model, timeout, max_tokens=max_tokens,
                           system_role=system_role)
    rw_name = "embedded" if rw is None else str(getattr(rw, "name", rewriter))
    result = run_eval(items, config, rewriter=rw, rewriter_name=rw_name, baselines=baselines,
                      dataset=label, console=err, progress=err.is_terminal)
    if detail:
        print_tables(result, out)
    # the summary comes last, so it is what a terminal's last screen holds
    print_summary(result, out)

    decompositions = []
    if compare is not None:
        for metric in DEFAULT_COMPARE_METRICS:
            if all(result.policy(p).figure("mean", metric) is not None for p in compare):
                d = decompose(result, compare[0], compare[1], metric)
                print_decomposition(d, out)
                decompositions.append(d)

    failures = check_gate(gate_obj, result, judged) if gate_obj is not None else None
    if report is not None:
        page = write_html(result, report, decompositions=decompositions, gate_failures=failures)
        png = write_png(result, report.with_suffix(".png"))
        err.print(f"wrote {page}" + (f" and {png}" if png else ""))
    if json_out is not None:
        write_json(result, json_out, gate_failures=failures, decompositions=decompositions)
        err.print(f"wrote {json_out}")
    if gate_obj is not None and failures is not None:
        _report_gate(gate_obj.source, failures, out)


def _report_gate(source: str, failures: Sequence[Any], out: Console) -> None:
    if not failures:
        out.print(f"[green]gate passed[/green] ({source}): every stratum meets its bounds")
        return
    for f in failures:
        out.print(f"[red]gate[/red] {f.message}")
    by_policy: dict[str, list[str]] = {}
    for f in failures:
        strata = by_policy.setdefault(f.policy, [])
        if f.stratum not in strata:
            strata.append(f.stratum)
    where = "; ".join(f"policy {p}: stratum {', '.join(s)}" for p, s in by_policy.items())
    out.print(f"[red bold]gate failed[/red bold] ({source}): {len(failures)} bound(s) missed "
              f"— {where}")
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``.

    >>> import typer
    >>> app = typer.Typer()
    >>> register(app)
    """
    app.command("eval", short_help="Score policies, baselines or your own rewrites on a set.")(eval_command)
