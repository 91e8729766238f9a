"""Worker for tests/metrics/test_streaming.py, started by torchrun with 2 gloo processes: each
rank updates SubconceptScores with its part of the data (uneven) and rank 0 writes every
rank's synced result to a JSON file. Arguments: OUT N SEED."""

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist


def main(out: str, n: int, seed: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_streaming import SIZES, make_data

    from medeval.metrics.streaming import SubconceptScores

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    sc, y, s, q = make_data(seed, n)
    part = slice(0, 37) if rank == 0 else slice(37, n)
    metric = SubconceptScores(SIZES)
    for a in range(part.start, part.stop, 10):  # a few batches per rank
        b = min(a + 10, part.stop)
        metric.update(*(torch.tensor(v[a:b]) for v in (s, y, sc, q)))
    result = {k: float(v) for k, v in metric.compute().items()}
    gathered = [None, None]
    dist.all_gather_object(gathered, result)
    if rank == 0:
        Path(out).write_text(json.dumps({"0": gathered[0], "1": gathered[1]}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
