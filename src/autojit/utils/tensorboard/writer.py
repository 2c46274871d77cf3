"""SummaryWriter: torch.utils.tensorboard.SummaryWriter's API over tensorboardX's writer.

Every method takes what torch's takes, autojit tensors where torch's takes torch tensors, and
writes the same summaries into event files under `log_dir` (default `runs/DATE_HOST` followed by
`comment`, as torch's). Tensors are handed to tensorboardX as NumPy arrays (scalars as Python
numbers); add_graph traces the model with autojit's tracer (graph.py), and add_tensor writes
the tensor summary torch writes. Called inside a function autojit.compile traces, a method
writes after each run, with that run's values (`writer.add_scalar("loss", loss.item(),
step)` stays compiled), as print and logging do. What tensorboardX cannot write as torch does raises
NotImplementedError naming the argument: add_scalar's `new_style` and add_hparams'
`hparam_domain_discrete`.
"""

from __future__ import annotations

import functools
import os

from ...ir.printing import defer
from ...tensor.state import state
from ...tensor.tensor import Tensor
from .event_file import writer_classes

INSTALL = "pip install 'autojit[tensorboard]'"


def _tensorboardx():
    try:
        import tensorboardX
    except ImportError as error:
        raise ImportError("autojit.utils.tensorboard.SummaryWriter writes its event files "
                          f"with tensorboardX, which is not installed: {INSTALL} (or pip "
                          "install tensorboardX)") from error
    return tensorboardX


def _numpy(value):
    """An autojit tensor as a NumPy array (bfloat16, which NumPy lacks, as float32); lists
    and tuples of tensors element by element; anything else as it is."""
    if isinstance(value, Tensor):
        value = value.detach().cpu()
        if str(value.dtype) == "autojit.bfloat16":
            value = value.float()
        return value.numpy()
    if isinstance(value, (list, tuple)) and any(isinstance(item, Tensor) for item in value):
        return type(value)(_numpy(item) for item in value)
    return value


def _number(value):
    """A scalar for add_scalar: a tensor or array of one element as a Python number."""
    value = _numpy(value)
    if hasattr(value, "item"):
        if getattr(value, "size", 1) != 1:
            raise ValueError(f"add_scalar: scalar_value must have one element, got shape "
                             f"{tuple(value.shape)}")
        return value.item()
    return value


class SummaryWriter:
    """Writes entries to event files in `log_dir` for TensorBoard to read.

    >>> import tempfile, autojit
    >>> from autojit.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as folder, SummaryWriter(folder) as writer:
    ...     for step in range(3):
    ...         writer.add_scalar("loss", autojit.tensor(1.0 / (step + 1)), step)
    ...     writer.add_histogram("weights", autojit.randn(100), 2)
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = ""):
        _tensorboardx()
        self._file_writer_class, writer_class = writer_classes()
        self._writer = writer_class(
            logdir=log_dir, comment=comment, purge_step=purge_step, max_queue=max_queue,
            flush_secs=flush_secs, filename_suffix=filename_suffix)
        self.log_dir = self._writer.logdir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    # ---- scalars, histograms, tensors ----------------------------------------------------

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False) -> None:
        """One value of the curve `tag` at `global_step`."""
        if new_style:
            raise NotImplementedError("add_scalar(new_style=True): the tensor-based scalar is "
                                      "not written; the classic one (new_style=False) is "
                                      "drawn the same way by TensorBoard")
        value = _number(scalar_value)
        self._writer.add_scalar(tag, value, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None) -> None:
        """Several curves on one chart: each in a run of its own, `log_dir/MAIN_TAG_TAG` (a
        `/` in main_tag as `_`), as torch's writer lays them out."""
        from tensorboardX.summary import scalar

        values = {tag: _number(value) for tag, value in tag_scalar_dict.items()}
        writers = self._writer.all_writers
        if writers is None:
            self._writer._get_file_writer()
            writers = self._writer.all_writers
        for tag, value in values.items():
            folder = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + tag)
            if folder not in writers:
                writers[folder] = self._file_writer_class(folder, self.max_queue,
                                                          self.flush_secs,
                                                          self.filename_suffix)
            writers[folder].add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None) -> None:
        """The whole tensor, as torch's add_tensor writes it (a TensorProto with its bytes)."""
        import numpy as np
        from tensorboardX.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

        array = np.ascontiguousarray(_numpy(tensor))
        kinds = {np.dtype(np.float16): types_pb2.DT_HALF, np.dtype(np.float32):
                 types_pb2.DT_FLOAT, np.dtype(np.float64): types_pb2.DT_DOUBLE,
                 np.dtype(np.int8): types_pb2.DT_INT8, np.dtype(np.uint8): types_pb2.DT_UINT8,
                 np.dtype(np.int16): types_pb2.DT_INT16, np.dtype(np.int32): types_pb2.DT_INT32,
                 np.dtype(np.int64): types_pb2.DT_INT64, np.dtype(np.bool_): types_pb2.DT_BOOL}
        if array.dtype not in kinds:
            raise TypeError(f"add_tensor: a tensor of dtype {array.dtype} has no TensorBoard "
                            "tensor type")
        shape = tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=size) for size in array.shape])
        proto = tensor_pb2.TensorProto(dtype=kinds[array.dtype], tensor_shape=shape,
                                       tensor_content=array.tobytes())
        metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="tensor"))
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=tag, tensor=proto, metadata=metadata)])
        self._writer._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        """The distribution of `values` (any shape) at `global_step`."""
        self._writer.add_histogram(tag, _numpy(values), global_step, bins, walltime, max_bins)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares,  # noqa: A002 - torch's
                          bucket_limits, bucket_counts, global_step=None, walltime=None) -> None:
        """A histogram given by its buckets, as computed elsewhere."""
        self._writer.add_histogram_raw(
            tag, _number(min), _number(max), _number(num), _number(sum), _number(sum_squares),
            _numpy(bucket_limits), _numpy(bucket_counts), global_step, walltime)

    # ---- images, figures, media ----------------------------------------------------------

    def add_image(self, tag, img_tensor, global_step=None, walltime=None,
                  dataformats="CHW") -> None:
        """An image: floats in [0, 1] or uint8, laid out as `dataformats` says."""
        self._writer.add_image(tag, _numpy(img_tensor), global_step, walltime, dataformats)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None,
                   dataformats="NCHW") -> None:
        """A batch of images, shown as a grid."""
        self._writer.add_images(tag, _numpy(img_tensor), global_step, walltime, dataformats)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None,
                             walltime=None, rescale=1, dataformats="CHW", labels=None) -> None:
        """An image with boxes (N, 4: x1, y1, x2, y2) drawn on it."""
        self._writer.add_image_with_boxes(tag, _numpy(img_tensor), _numpy(box_tensor),
                                          global_step, walltime, dataformats, labels,
                                          rescale=rescale)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None) -> None:
        """A matplotlib figure (or a list of them), rendered to an image."""
        self._writer.add_figure(tag, figure, global_step, close, walltime)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None) -> None:
        """A video (N, T, C, H, W); needs moviepy, as torch's does."""
        self._writer.add_video(tag, _numpy(vid_tensor), global_step, fps, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100,
                  walltime=None) -> None:
        """A sound (1, L) of values in [-1, 1]."""
        self._writer.add_audio(tag, _numpy(snd_tensor), global_step, sample_rate, walltime)

    # ---- text, graphs, embeddings, curves -----------------------------------------------

    def add_text(self, tag, text_string, global_step=None, walltime=None) -> None:
        """Text (Markdown) at `global_step`."""
        self._writer.add_text(tag, text_string, global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False,
                  use_strict_trace=True) -> None:
        """The graph of `model(*input_to_model)` as autojit traces it (graph.py says what the
        nodes are). `use_strict_trace` is accepted for torch's signature; the trace has no
        strict mode."""
        from tensorboardX.proto import event_pb2

        from .graph import graph_def

        if input_to_model is None:
            inputs = ()
        elif isinstance(input_to_model, (list, tuple)):
            inputs = tuple(input_to_model)
        else:
            inputs = (input_to_model,)
        graph = graph_def(model, inputs, verbose)
        event = event_pb2.Event(graph_def=graph.SerializeToString())
        self._writer._get_file_writer().add_event(event)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None) -> None:
        """Points (N, D) for the projector, with optional labels and thumbnails."""
        self._writer.add_embedding(_numpy(mat), metadata, _numpy(label_img), global_step, tag,
                                   metadata_header)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None) -> None:
        """The precision-recall curve of `predictions` (in [0, 1]) against binary `labels`."""
        self._writer.add_pr_curve(tag, _numpy(labels), _numpy(predictions), global_step,
                                  num_thresholds, _numpy(weights), walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None,
                         walltime=None) -> None:
        """A precision-recall curve from counts computed elsewhere."""
        self._writer.add_pr_curve_raw(
            tag, _numpy(true_positive_counts), _numpy(false_positive_counts),
            _numpy(true_negative_counts), _numpy(false_negative_counts), _numpy(precision),
            _numpy(recall), global_step, num_thresholds, _numpy(weights), walltime)

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None) -> None:
        """A 3-D mesh or point cloud (B, N, 3)."""
        self._writer.add_mesh(tag, _numpy(vertices), _numpy(colors), _numpy(faces),
                              config_dict, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None) -> None:
        """Hyperparameters and the metrics they gave, in a run of their own (`run_name`, by
        default the time), for TensorBoard's HParams tab."""
        if hparam_domain_discrete is not None:
            raise NotImplementedError("add_hparams(hparam_domain_discrete=...): the discrete "
                                      "domains are not written; leave it out")
        self._writer.add_hparams({key: _number(value) for key, value in hparam_dict.items()},
                                 {key: _number(value) for key, value in metric_dict.items()},
                                 name=run_name, global_step=global_step)

    def add_custom_scalars(self, layout) -> None:
        """The layout of TensorBoard's Custom Scalars tab."""
        self._writer.add_custom_scalars(layout)

    def add_custom_scalars_multilinechart(self, tags, category="default",
                                          title="untitled") -> None:
        self._writer.add_custom_scalars_multilinechart(tags, category, title)

    def add_custom_scalars_marginchart(self, tags, category="default",
                                       title="untitled") -> None:
        self._writer.add_custom_scalars_marginchart(tags, category, title)

    def add_onnx_graph(self, prototxt) -> None:
        """A graph from an ONNX model file."""
        self._writer.add_onnx_graph(prototxt)

    # ---- the file ------------------------------------------------------------------------

    def flush(self) -> None:
        """Write every pending event to disk."""
        self._writer.flush()

    def close(self) -> None:
        """Flush and close the event files; a later add_* reopens them, as torch's does."""
        self._writer.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _deferred_in_traces(method):
    """`method` as called from a function autojit.compile traces: made after each run, with
    that run's values (a loss's `.item()`, a tensor), as print and logging are
    (ir/printing.defer); tensors are handed over detached, as the method reads only their
    values. Outside a trace it runs as it is."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        if state.tracer is not None:
            args, kwargs = _detached((args, kwargs))
            if defer(method, (self, *args), kwargs):
                return None
        return method(self, *args, **kwargs)

    return call


def _detached(value):
    if isinstance(value, Tensor):
        return value.detach()
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(item) for item in value)
    if isinstance(value, dict):
        return {key: _detached(item) for key, item in value.items()}
    return value


# Every add_* method but add_graph (which traces a model itself) and the file's own methods.
for _name, _method in list(vars(SummaryWriter).items()):
    if _name.startswith("add_") and _name != "add_graph" or _name in ("flush", "close"):
        setattr(SummaryWriter, _name, _deferred_in_traces(_method))
