"""autojit.utils.tensorboard.SummaryWriter writes what TensorBoard reads, as torch's does.

Each test writes the same entries with autojit's writer (from autojit tensors) and with
torch.utils.tensorboard's (from torch tensors), reads both runs back with TensorBoard's own
event reader (EventAccumulator, what `tensorboard --logdir` uses), and compares. The writer
needs tensorboardX and the reader tensorboard: the `test` extra installs both; without them
the tests are skipped with a reason.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import autojit
from autojit import nn

pytest.importorskip("tensorboardX", reason="the writer needs tensorboardX "
                    "(pip install 'autojit[tensorboard]')")
event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator",
    reason="reading the events back needs tensorboard (pip install 'autojit[test]')")
torch = pytest.importorskip("torch")
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

from autojit.utils.tensorboard import SummaryWriter  # noqa: E402


def read(folder):
    """Every entry TensorBoard finds in the run in `folder`."""
    accumulator = event_accumulator.EventAccumulator(
        str(folder), size_guidance={event_accumulator.SCALARS: 0,
                                    event_accumulator.HISTOGRAMS: 0,
                                    event_accumulator.IMAGES: 0,
                                    event_accumulator.TENSORS: 0})
    return accumulator.Reload()


def both(tmp_path, write):
    """The runs `write(writer, tensor)` makes with autojit's writer and with torch's."""
    ours, theirs = tmp_path / "autojit", tmp_path / "torch"
    with SummaryWriter(str(ours)) as writer:
        write(writer, autojit.tensor)
    with TorchWriter(str(theirs)) as writer:
        write(writer, torch.tensor)
    return read(ours), read(theirs)


def test_scalars_from_tensors_and_numbers_read_back_as_torch_writes_them(tmp_path):
    def write(writer, tensor):
        for step in range(5):
            writer.add_scalar("loss", tensor(1.0 / (step + 1)), step)
            writer.add_scalar("lr", 0.1 * 0.5 ** step, global_step=step, walltime=100.0 + step)
        writer.add_scalar("accuracy", tensor([0.75]), 7)

    ours, theirs = both(tmp_path, write)
    assert ours.Tags()["scalars"] == theirs.Tags()["scalars"] == ["loss", "lr", "accuracy"]
    for tag in ("loss", "lr", "accuracy"):
        mine, reference = ours.Scalars(tag), theirs.Scalars(tag)
        assert [(e.step, e.value) for e in mine] == [(e.step, e.value) for e in reference]
    assert [e.wall_time for e in ours.Scalars("lr")] == [100.0 + step for step in range(5)]
    assert ours.Scalars("loss")[2].value == pytest.approx(1 / 3)


def test_add_scalars_writes_one_run_per_curve_as_torch(tmp_path):
    def write(writer, tensor):
        for step in range(3):
            writer.add_scalars("loss", {"train": tensor(2.0 - step), "test": 3.0 - step}, step)

    both(tmp_path, write)
    for run in ("loss_train", "loss_test"):
        ours, theirs = read(tmp_path / "autojit" / run), read(tmp_path / "torch" / run)
        assert [(e.step, e.value) for e in ours.Scalars("loss")] == \
            [(e.step, e.value) for e in theirs.Scalars("loss")]
        assert len(ours.Scalars("loss")) == 3


def test_histograms_of_a_tensor_match_torchs(tmp_path):
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32)

    def write(writer, tensor):
        writer.add_histogram("weights", tensor(values), 3)
        writer.add_histogram("weights", tensor(values) * 2, 4, bins="auto")

    ours, theirs = both(tmp_path, write)
    for mine, reference in zip(ours.Histograms("weights"), theirs.Histograms("weights"),
                               strict=True):
        assert mine.step == reference.step
        a, b = mine.histogram_value, reference.histogram_value
        assert (a.min, a.max, a.num) == pytest.approx((b.min, b.max, b.num))
        assert (a.sum, a.sum_squares) == pytest.approx((b.sum, b.sum_squares), rel=1e-5)
        assert a.bucket_limit == pytest.approx(b.bucket_limit)
        assert a.bucket == b.bucket
    assert ours.Histograms("weights")[0].histogram_value.num == 1000


def test_images_text_and_tensors_read_back(tmp_path):
    image = np.linspace(0, 1, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)

    def write(writer, tensor):
        writer.add_image("picture", tensor(image), 1)
        writer.add_images("batch", tensor(np.stack([image, image])), 1)
        writer.add_text("note", "loss went **down**", 2)
        writer.add_tensor("weights", tensor([[1.5, -2.0], [0.25, 4.0]]), 5)

    ours, theirs = both(tmp_path, write)
    for tag in ("picture", "batch"):
        mine, reference = ours.Images(tag)[0], theirs.Images(tag)[0]
        assert (mine.width, mine.height) == (reference.width, reference.height)
        assert mine.encoded_image_string == reference.encoded_image_string
    assert (ours.Images("picture")[0].width, ours.Images("picture")[0].height) == (5, 4)
    text = ours.Tensors("note/text_summary")[0].tensor_proto.string_val[0]
    reference = theirs.Tensors("note/text_summary")[0].tensor_proto.string_val[0]
    assert text == reference == b"loss went **down**"
    from tensorboard.util import tensor_util

    stored = tensor_util.make_ndarray(ours.Tensors("weights")[0].tensor_proto)
    assert stored.tolist() == tensor_util.make_ndarray(
        theirs.Tensors("weights")[0].tensor_proto).tolist() == [[1.5, -2.0], [0.25, 4.0]]
    assert ours.Tensors("weights")[0].step == 5


def test_add_graph_writes_the_traced_forward(tmp_path):
    autojit.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_graph(model, autojit.randn(5, 4))
    graph = read(tmp_path).Graph()
    nodes = {node.name: node for node in graph.node}
    assert nodes["input/args0"].op == "IO Node"
    assert nodes["0/weight"].op == "Parameter" and nodes["2/bias"].op == "Parameter"
    ops = [node.op for node in graph.node]
    assert ops.count("matmul") == 2 and ops.count("relu") == 1
    (output,) = [node for node in graph.node if node.name.startswith("output/")]
    assert nodes[output.input[0]].op == "add"
    dims = [d.size for d in output.attr["_output_shapes"].list.shape[0].dim]
    assert dims == [5, 2]
    relu = next(node for node in graph.node if node.op == "relu")
    assert nodes[relu.input[0]].op == "add"


def test_flush_makes_entries_readable_before_close_and_close_then_add_opens_a_new_file(
        tmp_path):
    writer = SummaryWriter(str(tmp_path), flush_secs=3600, max_queue=1000)
    writer.add_scalar("x", 1.0, 0)
    writer.flush()
    assert [e.value for e in read(tmp_path).Scalars("x")] == [1.0]
    writer.add_scalar("x", 2.0, 1)
    writer.close()
    writer.add_scalar("x", 3.0, 2)  # as torch's writer: a new event file in the same folder
    writer.close()
    assert [e.value for e in read(tmp_path).Scalars("x")] == [1.0, 2.0, 3.0]
    assert len(list(tmp_path.iterdir())) == 2
    assert writer.get_logdir() == str(tmp_path)


def test_max_queue_pending_entries_are_written_without_flush(tmp_path):
    writer = SummaryWriter(str(tmp_path), flush_secs=3600, max_queue=3)
    for step in range(3):
        writer.add_scalar("x", float(step), step)
    assert [e.step for e in read(tmp_path).Scalars("x")] == [0, 1, 2]
    writer.close()


def test_default_log_dir_is_runs_date_host_and_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as writer:
        writer.add_scalar("x", 1.0, 0)
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.endswith("_lr0.1") and writer.get_logdir() == str(run.relative_to(tmp_path))


def test_what_is_not_written_says_so():
    with pytest.raises(NotImplementedError, match="new_style"):
        SummaryWriter.add_scalar(object.__new__(SummaryWriter), "x", 1.0, new_style=True)
    with pytest.raises(ValueError, match="one element, got shape \\(2,\\)"):
        SummaryWriter.add_scalar(object.__new__(SummaryWriter), "x", autojit.ones(2))


def test_a_missing_tensorboardx_is_an_import_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match=r"pip install 'autojit\[tensorboard\]'"):
        SummaryWriter("unused")
    assert importlib.util.find_spec("autojit.utils.tensorboard") is not None


def test_files_made_in_one_second_are_read_in_the_order_made(tmp_path, monkeypatch):
    # The tenth event file of a process, then the eleventh (its reopening): names that sort
    # as made (".9" sorted after ".10").
    import itertools

    from autojit.utils.tensorboard import event_file

    monkeypatch.setattr(event_file, "_FILES", itertools.count(9))
    writer = SummaryWriter(str(tmp_path / "run"))
    writer.add_scalar("x", 1.0, 0)
    writer.close()
    writer.add_scalar("x", 2.0, 1)
    writer.close()
    assert [e.value for e in read(tmp_path / "run").Scalars("x")] == [1.0, 2.0]
