"""Bad indices to the scatter family raise torch's error, eagerly and compiled.

The cases of tests/test_index_errors.py's kind (run with its `check_case`: torch, autojit
eager, then compiled on good data, bad data of the same shapes, and good data again) for
scatter, scatter_reduce, index_add, index_copy, index_fill, take and put, whose messages and
exception types differ from op to op in torch.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_index_errors import X23, Case, _i, check_case

CASES = [
    Case("scatter_3", lambda t, F, x, i, s: t.scatter(x, 0, i, s),
         (X23, _i(1, 0, 1).reshape(1, 3), np.ones((1, 3))),
         (X23, _i(1, 3, 1).reshape(1, 3), np.ones((1, 3)))),
    Case("scatter_value_minus_1", lambda t, F, x, i: x.scatter(1, i, 2.0),
         (X23, _i(0, 2).reshape(1, 2)), (X23, _i(0, -1).reshape(1, 2))),
    Case("scatter_reduce_amax_4", lambda t, F, x, i, s: t.scatter_reduce(x, 1, i, s, "amax"),
         (X23, _i(0, 2).reshape(1, 2), np.ones((1, 2))),
         (X23, _i(4, 2).reshape(1, 2), np.ones((1, 2)))),
    Case("index_add_3", lambda t, F, x, i, s: x.index_add(1, i, s),
         (X23, _i(0, 2), np.ones((2, 2))), (X23, _i(3, 2), np.ones((2, 2)))),
    Case("index_copy_minus_1", lambda t, F, x, i, s: x.index_copy(1, i, s),
         (X23, _i(0, 2), np.ones((2, 2))), (X23, _i(0, -1), np.ones((2, 2)))),
    Case("index_fill_minus_4", lambda t, F, x, i: x.index_fill(1, i, 5.0),
         (X23, _i(0, -3)), (X23, _i(0, -4))),
    Case("take_6", lambda t, F, x, i: t.take(x, i), (X23, _i(5, -6)), (X23, _i(6, 0))),
    Case("put_minus_7", lambda t, F, x, i, s: x.put(i, s), (X23, _i(1, -1), np.ones(2)),
         (X23, _i(1, -7), np.ones(2))),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_like_torch_eager_and_compiled(case):
    check_case(case)
