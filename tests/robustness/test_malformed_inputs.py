"""Malformed inputs and option values across the seven tools: each is refused with exit code 2
and one line on stderr naming what is wrong (the file, column, row, key or option), and no
file is created or changed — an earlier output given as ``--out`` stays as it was.

Each case of :data:`CASES` is (tool, id, argv, files to spoil, the text the message must hold).
``{r}`` in argv and in the text is the case's folder (see :mod:`malformed_fixtures`).
Tools that take ``--out`` get one: an earlier output of the same tool (evaluate, discover and
analyze with ``--force``, benchmark with ``--resume``, embed; checked untouched), a new path
(train: a run folder; tasks split: a manifest; checked absent). Calls are in-process
(``medeval.cli.<tool>.main``); the heavy work of train and embed is replaced by a stub that fails
the case, so a refusal that comes too late (after training or embedding would have started) is
reported as such instead of running.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from malformed_fixtures import (
    PREVIOUS,
    build_results,
    collection_table,
    embeddings,
    make_workspace,
    predictions,
    tree_digest,
)


@dataclass(frozen=True)
class Case:
    tool: str
    id: str
    argv: tuple[str, ...]
    names: str  # the message must contain it (after {r} is filled in)
    files: Callable[[Path], None] | None = None
    code: int = 2
    out: bool = True  # give the tool its --out


CASES: list[Case] = []


def case(tool, id_, argv, names, files=None, *, code=2, out=True) -> None:
    CASES.append(Case(tool, id_, tuple(argv), names, files, code, out))


# --- spoiling files -------------------------------------------------------------------------
def write(rel: str, text: str | bytes) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)

    return make


def frame(rel: str, make_frame: Callable[[], pd.DataFrame]) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        df = make_frame()
        if rel.endswith(".parquet"):  # a column of mixed cells is stored as text
            mixed = [c for c in df.columns if df[c].dtype == object]
            df.astype(dict.fromkeys(mixed, str)).to_parquet(path, index=False)
        else:
            df.to_csv(path, index=False)

    return make


def with_cell(df: pd.DataFrame, column: str, row: int, value) -> pd.DataFrame:
    df = df.copy()
    df[column] = df[column].astype(object)
    df.loc[row, column] = value
    return df


def preds(**change) -> pd.DataFrame:
    df = predictions()
    for column, values in change.items():
        df[column] = values
    return df


JUNK = b"PAR1\x00\x01garbage that is not a parquet file\xff\xfePAR1"
BINARY = bytes(range(256)) * 8


# --- evaluate -------------------------------------------------------------------------------
def ev(*extra: str, pred: str = "{r}/in/preds.csv", sizes: str | None = "{r}/in/sizes.json"):
    argv = ["--predictions", pred, "--bootstrap", "0", "--quiet"]
    return [*argv, *(["--train-sizes", sizes] if sizes else []), *extra]


EVALUATE_OPTIONS = [
    ("--bootstrap", "-1", "--bootstrap"),
    ("--bootstrap", "abc", "--bootstrap"),
    ("--bootstrap", "1.5", "--bootstrap"),
    ("--bootstrap", "nan", "--bootstrap"),
    ("--confidence", "7", "--confidence"),
    ("--confidence", "0", "--confidence"),
    ("--confidence", "1", "--confidence"),
    ("--confidence", "-0.5", "--confidence"),
    ("--confidence", "nan", "--confidence"),
    ("--confidence", "inf", "--confidence"),
    ("--confidence", "abc", "--confidence"),
    ("--threshold", "nan", "--threshold"),
    ("--threshold", "inf", "--threshold"),
    ("--threshold", "-inf", "--threshold"),
    ("--threshold", "abc", "--threshold"),
    ("--seed", "-1", "--seed"),
    ("--seed", "abc", "--seed"),
    ("--seed", "1e3", "--seed"),
    ("--stratify", "bogus", "--stratify"),
    ("--device", "meta", "meta"),
    ("--device", "bogus", "bogus"),
]
for opt, value, name in EVALUATE_OPTIONS:
    case("evaluate", f"{opt}={value}", ev(opt, value), name)

BAD = "{r}/bad/preds.csv"
BADPQ = "{r}/bad/preds.parquet"
EVALUATE_FILES = [
    ("missing-file", ev(pred="{r}/nope.csv"), "{r}/nope.csv", None),
    ("predictions-is-folder", ev(pred="{r}/in"), "{r}/in", None),
    ("empty-file", ev(pred=BAD), "preds.csv", write("bad/preds.csv", "")),
    ("header-only", ev(pred=BAD), "preds.csv", write("bad/preds.csv", "y_true,y_score\n")),
    ("binary-csv", ev(pred=BAD), "preds.csv", write("bad/preds.csv", BINARY)),
    ("junk-parquet", ev(pred=BADPQ), "preds.parquet", write("bad/preds.parquet", JUNK)),
    (
        "unknown-format",
        ev(pred="{r}/bad/preds.xlsx"),
        "preds.xlsx",
        write("bad/preds.xlsx", "y_true,y_score\n1,0.5\n"),
    ),
    (
        "no-y_true",
        ev(pred=BAD),
        "y_true",
        frame("bad/preds.csv", lambda: predictions().drop(columns="y_true")),
    ),
    (
        "no-score-no-pred",
        ev(pred=BAD),
        "y_score",
        frame("bad/preds.csv", lambda: predictions().drop(columns="y_score")),
    ),
    (
        "duplicated-column",
        ev(pred=BAD),
        "y_score",
        write("bad/preds.csv", "y_true,y_score,y_score\n1,0.5,0.4\n0,0.2,0.1\n"),
    ),
    (  # names are stripped: a padded copy of a column is a second one
        "padded-duplicate-column",
        ev(pred=BAD, sizes=None),
        "y_score",
        write("bad/preds.csv", "y_true,y_score, y_score\n1,0.5,0.4\n0,0.2,0.1\n"),
    ),
    (
        "non-numeric-score-csv",
        ev(pred=BAD),
        "row 3",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "y_score", 2, "high")),
    ),
    (
        "non-numeric-score-parquet",  # Parquet text is refused by its stored type
        ev(pred=BADPQ),
        "'y_score': is stored as",
        frame("bad/preds.parquet", lambda: with_cell(predictions(), "y_score", 2, "high")),
    ),
    (
        "missing-score-cell",
        ev(pred=BAD),
        "row 5",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "y_score", 4, "")),
    ),
    (
        "inf-score",
        ev(pred=BAD),
        "y_score",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "y_score", 1, "inf")),
    ),
    (
        "y_true-2",
        ev(pred=BAD),
        "y_true",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "y_true", 3, 2)),
    ),
    (
        "y_true-text",
        ev(pred=BAD),
        "y_true",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "y_true", 3, "yes")),
    ),
    (
        "timestamp-score-parquet",
        ev(pred=BADPQ),
        "y_score",
        frame(
            "bad/preds.parquet",
            lambda: preds(y_score=pd.date_range("2020-01-01", periods=90, freq="h")),
        ),
    ),
    (
        "boolean-score-parquet",
        ev(pred=BADPQ),
        "y_score",
        frame("bad/preds.parquet", lambda: preds(y_score=np.arange(90) % 2 == 0)),
    ),
    (
        "string-score-parquet",
        ev(pred=BADPQ),
        "y_score",
        frame("bad/preds.parquet", lambda: preds(y_score=predictions()["y_score"].astype(str))),
    ),
    (
        "latin-1-file",
        ev(pred=BAD),
        "preds.csv",
        write(
            "bad/preds.csv",
            "y_true,y_score,subconcept\n1,0.5,Ödem\n0,0.2,normal\n".encode("latin-1"),
        ),
    ),
    (
        "non-numeric-posterior",
        ev(pred=BAD),
        "q_A",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "q_A", 6, "0.2x")),
    ),
    (
        "unknown-subconcept",
        ev(pred=BAD),
        "Z",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "subconcept", 0, "Z")),
    ),
    (
        "empty-subconcept",
        ev(pred=BAD),
        "subconcept",
        frame("bad/preds.csv", lambda: with_cell(predictions(), "subconcept", 0, " ")),
    ),
]
for id_, argv, name, files in EVALUATE_FILES:
    case("evaluate", id_, argv, name, files)
# bytes that are not UTF-8 from the first one (the header), as predictions and as reference rows
for id_, extra, pred in (
    ("binary-predictions", (), "{r}/bad/bin.csv"),
    ("binary-reference", ("--reference", "{r}/bad/bin.csv"), "{r}/in/preds.csv"),
):
    case("evaluate", id_, ev(*extra, pred=pred), "bad/bin.csv: ",
         write("bad/bin.csv", random.Random(3).randbytes(300)))  # fmt: skip

SZ = "{r}/bad/sizes.json"
SIZES_FILES = [
    ("sizes-missing", "{r}/nope.json", "{r}/nope.json", None),
    ("sizes-not-json", SZ, "sizes.json", "{not json"),
    ("sizes-binary", SZ, "sizes.json", BINARY),
    ("sizes-a-list", SZ, "sizes.json", "[1, 2]"),
    (
        "sizes-no-class",
        SZ,
        "class",
        {"normal": {"class": 0, "n": 6}, "A": {"n": 3}, "B": {"class": 1, "n": 2}},
    ),
    (
        "sizes-class-2",
        SZ,
        "class",
        {"normal": {"class": 0, "n": 6}, "A": {"class": 2, "n": 3}, "B": {"class": 1, "n": 2}},
    ),
    (
        "sizes-n-negative",
        SZ,
        "-3",
        {"normal": {"class": 0, "n": 6}, "A": {"class": 1, "n": -3}, "B": {"class": 1, "n": 2}},
    ),
    (
        "sizes-n-text",
        SZ,
        "many",
        {"normal": {"class": 0, "n": 6}, "A": {"class": 1, "n": "many"}, "B": {"class": 1, "n": 2}},
    ),
    (
        "sizes-n-fraction",
        SZ,
        "2.5",
        {"normal": {"class": 0, "n": 6}, "A": {"class": 1, "n": 2.5}, "B": {"class": 1, "n": 2}},
    ),
    (
        "sizes-entry-not-object",
        SZ,
        "A",
        {"normal": {"class": 0, "n": 6}, "A": 3, "B": {"class": 1, "n": 2}},
    ),
    (
        "sizes-padded-name",
        SZ,
        "' A'",
        {"normal": {"class": 0, "n": 6}, " A": {"class": 1, "n": 3}, "B": {"class": 1, "n": 2}},
    ),
    (
        "sizes-missing-subconcept",
        SZ,
        "B",
        {"normal": {"class": 0, "n": 6}, "A": {"class": 1, "n": 3}},
    ),
]
for id_, path, name, content in SIZES_FILES:
    text = content if isinstance(content, str | bytes) or content is None else json.dumps(content)
    files = None if content is None else write("bad/sizes.json", text)
    case("evaluate", id_, ev(sizes=path), name, files)
case("evaluate", "reference-missing", ev("--reference", "{r}/noref.csv"), "{r}/noref.csv")
case(
    "evaluate",
    "reference-junk",
    ev("--reference", "{r}/bad/ref.parquet"),
    "ref.parquet",
    write("bad/ref.parquet", JUNK),
)
case("evaluate", "run-and-out", ["--run", "{r}/in", "--quiet"], "--out")

# --- discover -------------------------------------------------------------------------------
DISCOVER = ["--train", "{r}/in/train.parquet", "--test", "{r}/in/test.parquet"]
DISCOVER += ["--predictions", "{r}/in/dpreds.csv", "--bootstrap", "0", "--quiet"]


def dis(*extra: str, train=None, test=None, pred=None) -> list[str]:
    argv = list(DISCOVER)
    for flag, value in (("--train", train), ("--test", test), ("--predictions", pred)):
        if value is not None:
            argv[argv.index(flag) + 1] = value
    return [*argv, *extra]


DISCOVER_OPTIONS = [
    ("--bootstrap", "-1"),
    ("--bootstrap", "abc"),
    ("--threshold", "nan"),
    ("--threshold", "inf"),
    ("--components", "0"),
    ("--components", "-2"),
    ("--k-max", "0"),
    ("--min-cluster-size", "0"),
    ("--n-estimators", "0"),
    ("--examples", "-1"),
    ("--seed", "-1"),
    ("--method", "bogus"),
    ("--reducer", "bogus"),
]
for opt, value in DISCOVER_OPTIONS:
    case("discover", f"{opt}={value}", dis(opt, value), opt)
case("discover", "train-missing", dis(train="{r}/nope.parquet"), "{r}/nope.parquet")
case(
    "discover",
    "train-junk",
    dis(train="{r}/bad/train.parquet"),
    "train.parquet",
    write("bad/train.parquet", JUNK),
)
case(
    "discover",
    "train-no-y",
    dis(train="{r}/bad/train.parquet"),
    "'y'",
    frame("bad/train.parquet", lambda: embeddings(60, 0).drop(columns="y")),
)
case(
    "discover",
    "train-text-feature",
    dis(train="{r}/bad/train.csv"),
    "f0001",
    frame("bad/train.csv", lambda: with_cell(embeddings(60, 0), "f0001", 7, "oops")),
)
case(
    "discover",
    "test-rows-differ",
    dis(test="{r}/bad/test.parquet"),
    "test.parquet",
    frame("bad/test.parquet", lambda: embeddings(20, 1)),
)
case(
    "discover",
    "predictions-no-y_true",
    dis(pred="{r}/bad/dpreds.csv"),
    "y_true",
    write("bad/dpreds.csv", "y_score\n" + "0.5\n" * 30),
)
case(
    "discover",
    "predictions-text-score",
    dis(pred="{r}/bad/dpreds.csv"),
    "row 1",
    write("bad/dpreds.csv", "y_true,y_score\n" + "1,x\n" + "0,0.5\n" * 29),
)

# --- benchmark ------------------------------------------------------------------------------
BENCH = ["--max-splits", "1", "--n-estimators", "5", "--methods", "none", "--quiet"]


def bench(*extra: str, coll: str = "{r}/coll") -> list[str]:
    return ["--collection", coll, *BENCH, "--no-analyze", *extra]


BENCH_OPTIONS = [
    ("--jobs", "0"),
    ("--jobs", "-1"),
    ("--jobs", "abc"),
    ("--n-estimators", "0"),
    ("--n-estimators", "-3"),
    ("--max-splits", "0"),
    ("--max-splits", "11"),
    ("--seed", "-1"),
    ("--backend", "bogus"),
    ("--subconcepts", "bogus"),
]
for opt, value in BENCH_OPTIONS:
    case("benchmark", f"{opt}={value}", bench(opt, value), opt)
case("benchmark", "methods-bogus", bench("--methods", "none,bogus"), "bogus")
case("benchmark", "datasets-unknown", bench("--datasets", "nope"), "nope")
case("benchmark", "collection-missing", bench(coll="{r}/nowhere"), "{r}/nowhere")
case(
    "benchmark",
    "keel-data-missing",
    ["--collection", "keel", "--data", "{r}/nowhere", *BENCH],
    "{r}/nowhere",
)
case(
    "benchmark",
    "dask-unreachable",
    bench("--backend", "dask", "--scheduler", "tcp://127.0.0.1:9"),
    "127.0.0.1:9",
)
case("benchmark", "loader-option-of-other-source", bench("--images", "{r}"), "--images")

BC = "{r}/bcoll"
BENCH_TABLES = [
    (
        "text-feature-cell-csv",
        "t.csv",
        lambda: with_cell(collection_table(), "x1", 4, "n/a?"),
        "row 5",
    ),
    (
        "text-feature-cell-parquet",
        "t.parquet",
        lambda: with_cell(collection_table(), "x1", 4, "oops"),
        "row 5",
    ),
    ("no-label-column", "t.csv", lambda: collection_table().drop(columns="label"), "label"),
    (
        "padded-label-column",
        "t.csv",
        lambda: collection_table().rename(columns={"label": " label"}),
        "label",
    ),
    (
        "timestamp-feature",
        "t.parquet",
        lambda: collection_table().assign(x2=pd.date_range("2020", periods=300, freq="D")),
        "x2",
    ),
    ("empty-label-cell", "t.csv", lambda: with_cell(collection_table(), "label", 9, ""), "label"),
]
for id_, name, make, names in BENCH_TABLES:
    case("benchmark", id_, bench(coll=BC), names, frame(f"bcoll/{name}", make))
case(
    "benchmark",
    "duplicated-columns",
    bench(coll=BC),
    "x0",
    write(
        "bcoll/t.csv", "x0,x0,label\n" + "".join(f"{i},{i % 7},{'ab'[i % 2]}\n" for i in range(200))
    ),
)
case(
    "benchmark",
    "latin-1-table",
    bench(coll=BC),
    "t.csv",
    write(
        "bcoll/t.csv",
        ("x0,label\n" + "".join(f"{i},{'é'[0] if i % 2 else 'b'}\n" for i in range(200))).encode(
            "latin-1"
        ),
    ),
)
case("benchmark", "junk-parquet", bench(coll=BC), "t.parquet", write("bcoll/t.parquet", JUNK))


def keel_text(n: int = 200) -> str:
    """A small valid KEEL file: a header, three numeric attributes and a three-valued class."""
    df = collection_table(n)
    head = ["@relation t", *(f"@attribute x{i} real" for i in range(3))]
    head += ["@attribute class {a, b, c}", "@data"]
    return "\n".join(head + [",".join(map(str, row)) for row in df.itertuples(index=False)]) + "\n"


def keel_data(bad: str) -> Callable[[Path], None]:
    """``{r}/kdata/keel/``: a good set (``good.dat``) and ``abalone.dat`` holding ``bad``."""

    def make(root: Path) -> None:
        write("kdata/keel/good.dat", keel_text())(root)
        write("kdata/keel/abalone.dat", bad)(root)

    return make


KEEL = ["--collection", "keel", "--data", "{r}/kdata", *BENCH, "--no-analyze"]
for id_, bad in (
    ("keel-empty-file", ""),
    ("keel-header-only", "@relation x\n@attribute a real\n@attribute class {a, b}\n@data\n"),
):  # every data set is read before the results folder is touched: nothing written
    case("benchmark", id_, KEEL, "{r}/kdata/keel/abalone.dat", keel_data(bad))
case("benchmark", "empty-table", bench(coll=BC), "t.csv", write("bcoll/t.csv", ""))
case("benchmark", "header-only", bench(coll=BC), "t.csv", write("bcoll/t.csv", "x0,label\n"))


# --- analyze --------------------------------------------------------------------------------
def ana(*extra: str, results: str = "{r}/results") -> list[str]:
    return ["--results", results, "--quiet", *extra]


REC = "results/records/t/none-0.json"


def spoil_record(change: Callable[[dict], object]) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        path = root / REC
        rec = json.loads(path.read_text())
        path.write_text(json.dumps(change(rec)))

    return make


def _drop_scores_keys(rec: dict) -> dict:
    rec["scores"] = {"BA": "high"}
    return rec


def _drop(key: str) -> Callable[[dict], dict]:
    def change(rec: dict) -> dict:
        rec.pop(key)
        return rec

    return change


case("analyze", "results-missing", ana(results="{r}/nowhere"), "{r}/nowhere")
case("analyze", "results-a-file", ana(results="{r}/in/sizes.json"), "sizes.json")
case(
    "analyze",
    "results-empty",
    ana(results="{r}/emptyres"),
    "{r}/emptyres",
    lambda root: (root / "emptyres").mkdir(),
)
case("analyze", "rq3-method-bogus", ana("--rq3-method", "bogus"), "--rq3-method")
case("analyze", "metric-bogus", ana("--metric", "bogus"), "--metric")
case(
    "analyze",
    "record-truncated",
    ana(),
    "none-0.json",
    lambda root: (root / REC).write_text((root / REC).read_text()[:200]),
)
case("analyze", "record-a-list", ana(), "none-0.json", spoil_record(lambda rec: [rec]))
case("analyze", "record-wrong-schema", ana(), "none-0.json", spoil_record(_drop_scores_keys))
case("analyze", "record-no-scores", ana(), "none-0.json", spoil_record(_drop("scores")))
case(
    "analyze",
    "record-other-split",
    ana(),
    "none-0.json",
    spoil_record(lambda rec: {**rec, "split": 3}),
)
case(
    "analyze",
    "record-misnamed",
    ana(),
    "none.json",
    lambda root: (root / REC).rename(root / "results/records/t/none.json"),
)
case("analyze", "task-corrupt", ana(), "t.json", write("results/tasks/t.json", "{"))

# --- embed ----------------------------------------------------------------------------------
EMBED = ["--source", "synthetic", "--n-normal", "144", "--random-init", "--size", "32"]


def emb(*extra: str) -> list[str]:
    return [*EMBED, "--no-benchmark", "--quiet", *extra]


EMBED_OPTIONS = [
    ("--size", "0"),
    ("--size", "-1"),
    ("--batch-size", "0"),
    ("--workers", "-1"),
    ("--workers", "abc"),
    ("--svd-components", "0"),
    ("--seed", "-1"),
    ("--features", "bogus"),
    ("--n-normal", "-1"),
    ("--n-normal", "abc"),
]
for opt, value in EMBED_OPTIONS:
    case("embed", f"{opt}={value}", emb(opt, value), opt)
case("embed", "device-meta", emb("--device", "meta"), "meta")
case("embed", "device-bogus", emb("--device", "bogus"), "bogus")
case("embed", "source-bogus", ["--source", "bogus", "--no-benchmark"], "--source")
case(
    "embed",
    "path-missing",
    ["--source", "nih", "--path", "{r}/nowhere", "--random-init", "--no-benchmark"],
    "{r}/nowhere",
)
case("embed", "weights-and-random-init", emb("--weights", "{r}/in/sizes.json"), "--random-init")
case(
    "embed",
    "weights-missing",
    [*EMBED[:4], "--weights", "{r}/nope.pth", "--no-benchmark"],
    "{r}/nope.pth",
)
case("embed", "model-unknown", emb("--model", "nope"), "nope")
case(
    "embed",
    "benchmark-args-bad-option",
    [*EMBED, "--benchmark-args=--jobs 0", "--quiet"],
    "--jobs",
)
case("embed", "benchmark-args-unknown", [*EMBED, "--benchmark-args=--bogus", "--quiet"], "--bogus")
case(
    "embed",
    "benchmark-args-quote",
    [*EMBED, '--benchmark-args="--max-splits 1', "--quiet"],
    "--benchmark-args",
)
case(
    "embed",
    "benchmark-args-max-splits",
    [*EMBED, "--benchmark-args=--max-splits 99", "--quiet"],
    "--max-splits",
)


case(
    "embed",
    "cache-under-a-file",
    emb("--cache", "{r}/in/sizes.json/features"),
    "--cache {r}/in/sizes.json/features",
)


# --- train ----------------------------------------------------------------------------------
TRAIN = ["data.synthetic.n_normal=144", "train.epochs=1", "--quiet"]
TRAIN_CONFIG = [
    ("train.loss_weights.binary=-1", "train.loss_weights.binary"),
    ("train.loss_weights.binary=.nan", "train.loss_weights.binary"),
    ("train.loss_weights.subconcept=.inf", "train.loss_weights.subconcept"),
    ("train.lr=.inf", "train.lr"),
    ("train.lr=.nan", "train.lr"),
    ("train.lr=-1", "train.lr"),
    ("train.weight_decay=-1", "train.weight_decay"),
    ("train.epochs=-1", "train.epochs"),
    ("train.epochs=ten", "train.epochs"),
    ("train.batch_size=0", "train.batch_size"),
    ("train.image_size=0", "train.image_size"),
    ("train.workers=-1", "train.workers"),
    ("train.patience=-1", "train.patience"),
    ("train.grad_clip=-1", "train.grad_clip"),
    ("train.grad_clip=.nan", "train.grad_clip"),
    ("train.monitor=bogus", "train.monitor"),
    ("train.device=meta", "meta"),
    ("train.device=bogus", "bogus"),
    ("model.backbone=nope", "nope"),
    ("model.dropout=1.5", "model.dropout"),
    ("model.features=bogus", "model.features"),
    ("splits.seeds=[]", "splits.seeds"),
    ("splits.seeds=[1,1]", "splits.seeds"),
    ("splits.seeds=[-3]", "splits.seeds"),
    ("splits.n=0", "splits.n"),
    ("evaluation.n_bootstrap=-1", "evaluation.n_bootstrap"),
    ("evaluation.threshold=.nan", "evaluation.threshold"),
    ("data.synthetic.n_normal=-5", "data.synthetic.n_normal"),
    ("nosuch.key=1", "nosuch"),
    ("train.epochs", "train.epochs"),
]
for override, name in TRAIN_CONFIG:
    case("train", override, [*TRAIN, override], name)
TRAIN_OPTIONS = [
    ("--splits", "0"),
    ("--splits", "-2"),
    ("--seed", "-1"),
]
for opt, value in TRAIN_OPTIONS:
    case("train", f"{opt}={value}", [*TRAIN, opt, value], opt)
case("train", "device-meta", [*TRAIN, "--device", "meta"], "meta")
case("train", "config-missing", [*TRAIN, "--config", "{r}/nope.yaml"], "{r}/nope.yaml")
case(
    "train",
    "config-binary",
    [*TRAIN, "--config", "{r}/bad/cfg.yaml"],
    "cfg.yaml",
    write("bad/cfg.yaml", BINARY),
)
case(
    "train",
    "config-a-list",
    [*TRAIN, "--config", "{r}/bad/cfg.yaml"],
    "cfg.yaml",
    write("bad/cfg.yaml", "- 1\n- 2\n"),
)
case(
    "train",
    "config-bad-value",
    [*TRAIN, "--config", "{r}/bad/cfg.yaml"],
    "train.lr",
    write("bad/cfg.yaml", "train:\n  lr: .inf\n"),
)
case("train", "weights-missing", [*TRAIN, "--weights", "{r}/nope.pth"], "{r}/nope.pth")
case("train", "resume-missing", ["--resume", "{r}/nowhere"], "{r}/nowhere", out=False)
case(
    "train",
    "resume-with-options",
    ["--resume", "{r}/nowhere", "--seed", "1"],
    "--resume",
    out=False,
)


# --- tasks ----------------------------------------------------------------------------------
def tcsv(*extra: str, command: str = "describe", path: str = "{r}/coll/t.csv") -> list[str]:
    return [command, "--source", "csv", "--path", path, *extra]


TB = "{r}/bad/t.csv"
TASK_CASES = [
    ("describe-source-bogus", ["describe", "--source", "bogus"], "--source", None),
    ("describe-path-missing", tcsv(path="{r}/nope.csv"), "{r}/nope.csv", None),
    ("describe-seed-negative", tcsv("--seed", "-1"), "--seed", None),
    (
        "describe-text-feature",
        tcsv(path=TB),
        "row 5",
        frame("bad/t.csv", lambda: with_cell(collection_table(), "x1", 4, "oops")),
    ),
    (
        "describe-no-label",
        tcsv(path=TB),
        "label",
        frame("bad/t.csv", lambda: collection_table().drop(columns="label")),
    ),
    (
        "describe-duplicated-columns",
        tcsv(path=TB),
        "x0",
        write(
            "bad/t.csv", "x0,x0,label\n" + "".join(f"{i},{i},{'ab'[i % 2]}\n" for i in range(50))
        ),
    ),
    (
        "describe-latin-1",
        tcsv(path=TB),
        "t.csv",
        write("bad/t.csv", "x0,label\n1,\xe9\n2,b\n".encode("latin-1")),
    ),
    (
        "describe-junk-parquet",
        tcsv(path="{r}/bad/t.parquet"),
        "t.parquet",
        write("bad/t.parquet", JUNK),
    ),
    ("describe-label-column-missing", tcsv("--label-column", "nope"), "nope", None),
    (
        "describe-keel-name-unknown",
        ["describe", "--source", "keel", "--path", "{r}/coll", "--name", "nope"],
        "nope",
        None,
    ),
]
for id_, argv, name, files in TASK_CASES:
    case("tasks", id_, argv, name, files, out=False)


def broken_npz(cut: bool) -> bytes:
    """A MedMNIST-shaped .npz cut short (``cut``) or with a member's compressed bytes spoilt."""
    buf = io.BytesIO()
    rng = np.random.default_rng(0)
    arrays = {}
    for part in ("train", "val", "test"):
        arrays[f"{part}_images"] = rng.integers(0, 255, (20, 8, 8), dtype=np.uint8)
        arrays[f"{part}_labels"] = np.zeros((20, 1), dtype=np.int64)
    np.savez_compressed(buf, **arrays)
    data = bytearray(buf.getvalue())
    if cut:
        return bytes(data[: len(data) // 3])
    start = data.index(b"train_images.npy") + 200  # inside the first member's deflated bytes
    data[start : start + 300] = bytes(300)
    return bytes(data)


NPZ = ["describe", "--source", "medmnist", "--path", "{r}/bad/m.npz"]
for id_, content in (
    ("describe-medmnist-not-zip", b"junk"),
    ("describe-medmnist-zip-magic-only", b"PK\x03\x04junkjunkjunk"),
    ("describe-medmnist-cut-short", broken_npz(cut=True)),
    ("describe-medmnist-member-spoilt", broken_npz(cut=False)),
):
    case("tasks", id_, NPZ, "{r}/bad/m.npz", write("bad/m.npz", content), out=False)
SPLIT_CASES = [
    ("split-n-seeds-0", tcsv("--n-seeds", "0", command="split"), "--n-seeds", None),
    (
        "split-split-seed-negative",
        tcsv("--split-seed", "-1", command="split"),
        "--split-seed",
        None,
    ),
    ("split-seed-negative", tcsv("--seed", "-1", command="split"), "--seed", None),
    ("split-scheme-bogus", tcsv("--scheme", "bogus", command="split"), "--scheme", None),
    ("split-name-all", tcsv("--name", "all", command="split"), "--name", None),
    (
        "split-text-feature",
        tcsv(command="split", path=TB),
        "row 5",
        frame("bad/t.csv", lambda: with_cell(collection_table(), "x1", 4, "oops")),
    ),
    (
        "split-presplit-without-parts",
        tcsv("--scheme", "presplit", command="split"),
        "--scheme presplit",
        None,
    ),
]
for id_, argv, name, files in SPLIT_CASES:
    case("tasks", id_, argv, name, files)


# --- the harness ----------------------------------------------------------------------------
def out_argv(c: Case, root: Path) -> list[str]:
    if not c.out:
        return []
    if c.tool in PREVIOUS:  # taken as --force replaces or --resume continues it, or as embed adds
        flag = {"benchmark": ["--resume"], "embed": []}.get(c.tool, ["--force"])
        return ["--out", str(root / "prev" / c.tool), *flag]
    if c.tool == "train":
        return ["--out", str(root / "runs" / "train-run")]
    return ["--out", str(root / "split.csv")]  # tasks split


def run_tool(tool: str, argv: list[str]) -> int:
    try:
        return importlib.import_module(f"medeval.cli.{tool}").main(argv)
    except SystemExit as exc:  # argparse
        return exc.code


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("results")
    (base / "coll").mkdir()
    collection_table().to_csv(base / "coll" / "t.csv", index=False)
    build_results(base / "res", base / "coll")
    return base / "res"


def _no_work(*_args, **_kwargs):
    raise AssertionError("the work started before the input was refused")


@pytest.fixture
def root(tmp_path, monkeypatch, results):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path / "nodata"))
    make_workspace(tmp_path, results)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    for module, name in (
        ("medeval.flows.train", "run_training"),
        ("medeval.embeddings.table", "embed_table"),
    ):
        monkeypatch.setattr(importlib.import_module(module), name, _no_work)
    yield tmp_path
    for folder, dirs, _files in os.walk(tmp_path):  # a read-only folder would outlive the test
        for d in dirs:
            (Path(folder) / d).chmod(0o755)


def test_the_table_is_large_and_its_ids_unique():
    ids = [f"{c.tool}:{c.id}" for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 150
    assert {c.tool for c in CASES} == {
        "evaluate",
        "train",
        "tasks",
        "benchmark",
        "analyze",
        "embed",
        "discover",
    }


@pytest.mark.parametrize("c", CASES, ids=[f"{c.tool}:{c.id}" for c in CASES])
def test_a_malformed_input_exits_2_with_one_line_naming_it(root, c, capsys):
    if c.files is not None:
        c.files(root)
    before = tree_digest(root)
    argv = [a.format(r=root) for a in c.argv] + out_argv(c, root)
    code = run_tool(c.tool, argv)
    err = capsys.readouterr().err
    assert code == c.code, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert c.names.format(r=root) in err, err
    assert tree_digest(root) == before  # nothing created; an earlier --out untouched


def test_verbose_shows_the_traceback_of_the_same_error(root, capsys):
    argv = ["--predictions", str(root / "nope.csv"), "--out", str(root / "o"), "-v"]
    assert run_tool("evaluate", argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "nope.csv" in err.strip().splitlines()[-1], err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")
def test_embed_refuses_a_cache_it_cannot_write_before_the_work(root, capsys):
    # Tried, not read from the permission bits (root may write into a chmod-ed folder): /proc
    # takes no file, whoever runs the test.
    cache = Path("/proc/medeval-cache")
    before = tree_digest(root)
    argv = [*EMBED, "--no-benchmark", "--cache", str(cache), "--out", str(root / "prev/embed")]
    assert run_tool("embed", argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--cache {cache}" in err and "cannot write into" in err, err
    assert tree_digest(root) == before


def test_embed_refuses_a_cache_below_a_file_before_the_work(root, capsys):
    blocker = root / "blocker"
    blocker.write_text("a file, not a folder\n")
    cache = blocker / "cache"
    before = tree_digest(root)
    argv = [*EMBED, "--no-benchmark", "--cache", str(cache), "--out", str(root / "prev/embed")]
    assert run_tool("embed", argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--cache {cache}" in err, err
    assert f"{blocker} is a file, not a folder" in err, err
    assert tree_digest(root) == before
