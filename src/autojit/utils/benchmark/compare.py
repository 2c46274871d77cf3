"""`Compare`: prints many `Measurement`s as torch.utils.benchmark's Compare does, one table per
label, a row per sub-label (grouped by thread count) and a column per description, optionally
with trimmed significant figures, colour and high-variance warnings."""

from __future__ import annotations

import collections
import enum
import math
import operator

from .measurement import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value: float) -> int:
    return math.ceil(math.log10(value))


class _Column:
    """One description's cells: their number format is shared, so the decimals line up."""

    def __init__(self, grouped_results, time_scale, trim_significant_figures,
                 highlight_warnings) -> None:
        self.grouped_results = grouped_results
        flat = [result for group in grouped_results for result in group]
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings and any(r.has_warnings for r in flat if r)
        digits = [(_leading_digits(r.median / time_scale), r) for r in flat if r is not None]
        unit_digits = max(leading for leading, _ in digits)
        decimals = (min(max(r.significant_figures - leading, 0) for leading, r in digits)
                    if self._trim else 1)
        length = unit_digits + decimals + (1 if decimals else 0)
        self._template = f"{{:>{length}.{decimals}f}}{{:>{7 if self._highlight else 0}}}"

    def num_to_str(self, value, significant_figures, spread) -> str:
        if value is None:
            return " " * len(self.num_to_str(1, significant_figures, None))
        if self._trim:
            value = trim_sigfig(value, significant_figures)
        warning = f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else ""
        return self._template.format(value, warning)


class _Row:
    def __init__(self, results, row_group, render_env, env_width, time_scale, colorize,
                 num_threads) -> None:
        self.results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_width = env_width
        self._time_scale = time_scale
        self._colorize = colorize
        self._num_threads = num_threads
        self.columns: tuple[_Column, ...] = ()

    def as_column_strings(self) -> list[str]:
        first = next(result for result in self.results if result is not None)
        env = (f"({first.env})" if self._render_env else "").ljust(self._env_width + 4)
        cells = ["  " + env + first.as_row_name]
        for result, column in zip(self.results, self.columns):
            if result is None:
                cells.append(column.num_to_str(None, 1, None))
            else:
                cells.append(column.num_to_str(
                    result.median / self._time_scale, result.significant_figures,
                    result.iqr / result.median if result.has_warnings else None))
        return cells

    @staticmethod
    def color_segment(segment: str, value: float, best: float) -> str:
        if value <= best * 1.01 or value <= best + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, width: int) -> list[str]:
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(width, "-")]

    def finalize_column_strings(self, cells: list[str], widths: list[int]) -> list[str]:
        best: list[float | None] = [-1.0] * len(cells)
        if self._colorize == Colorize.ROWWISE:
            row_best = min(r.median for r in self.results if r is not None)
            best = [row_best] * len(cells)
        elif self._colorize == Colorize.COLUMNWISE:
            best = []
            for column in self.columns:
                medians = [r.median for r in column.grouped_results[self._row_group] if r]
                best.append(min(medians) if medians else None)
        row = [cells[0].ljust(widths[0])]
        for cell, width, result, best_value in zip(cells[1:], widths[1:], self.results, best):
            cell = cell.center(width)
            if self._colorize != Colorize.NONE and result is not None and best_value is not None:
                cell = self.color_segment(cell, result.median, best_value)
            row.append(cell)
        return row


class _Table:
    """The measurements of one label, laid out."""

    def __init__(self, results: list[Measurement], colorize, trim_significant_figures,
                 highlight_warnings) -> None:
        self.results = results
        self.label = results[0].label
        self.time_unit, self.time_scale = select_unit(min(r.median for r in results))
        self.row_keys = ordered_unique(self._row_key(r) for r in results)
        # Sorted by thread count and env only, so statements keep the order they were timed in.
        self.row_keys.sort(key=operator.itemgetter(slice(2)))
        self.column_keys = ordered_unique(r.description for r in results)
        self._highlight = highlight_warnings
        self.rows = self._lay_out(colorize, trim_significant_figures, highlight_warnings)

    @staticmethod
    def _row_key(result: Measurement):
        return result.num_threads, result.env, result.as_row_name

    def _lay_out(self, colorize, trim_significant_figures, highlight_warnings):
        grid = [[None] * len(self.column_keys) for _ in self.row_keys]
        row_position = {key: index for index, key in enumerate(self.row_keys)}
        column_position = {key: index for index, key in enumerate(self.column_keys)}
        for result in self.results:
            grid[row_position[self._row_key(result)]][column_position[result.description]] = result
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_width = max(len(env) for env in envs) if render_env else 0
        rows, groups = [], []
        prior_threads, prior_env, row_group = -1, "", -1
        for (num_threads, env, _), results in zip(self.row_keys, grid):
            new_group = num_threads != prior_threads
            if new_group:
                prior_threads, prior_env, row_group = num_threads, "", row_group + 1
                groups.append([])
            rows.append(_Row(results, row_group, render_env and env != prior_env, env_width,
                             self.time_scale, colorize, num_threads if new_group else None))
            groups[-1].append(results)
            prior_env = env
        columns = tuple(
            _Column([tuple(row[index] for row in group) for group in groups], self.time_scale,
                    trim_significant_figures, highlight_warnings)
            for index in range(len(self.column_keys)))
        for row in rows:
            row.columns = columns
        return rows

    def render(self) -> str:
        string_rows = [[""] + [key or "" for key in self.column_keys]]
        string_rows.extend(row.as_column_strings() for row in self.rows)
        count = max(len(cells) for cells in string_rows)
        for cells in string_rows:
            cells.extend([""] * (count - len(cells)))
        widths = [max(len(cell) for cell in column) for column in zip(*string_rows)]
        lines = ["  |  ".join(cell.center(width) for cell, width in zip(string_rows[0], widths))]
        width = len(lines[0])
        for cells, row in zip(string_rows[1:], self.rows):
            lines.extend(row.row_separator(width))
            lines.append("  |  ".join(row.finalize_column_strings(cells, widths)))
        warned = self._highlight and any(r.has_warnings for r in self.results)
        title = f" {self.label or ''} ".center(width - 2, "-")
        note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                if warned else "")
        body = "\n".join(lines)
        return (f"[{title}]\n{body}\n\n"
                f"Times are in {unit_to_english(self.time_unit)}s ({self.time_unit}).\n{note}")


class Compare:
    """Prints Measurements as tables: `print(Compare(results))` or `.print()`."""

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add Measurements to the ones already held."""
        for result in results:
            if not isinstance(result, Measurement):
                raise ValueError(
                    f"Expected an instance of `Measurement`, got {type(result)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each cell against its column's best (or its row's, with rowwise=True)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict[str | None, list[Measurement]] = collections.defaultdict(list)
        for result in Measurement.merge(self._results):
            by_label[result.label].append(result)
        return [_Table(results, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings).render() for results in by_label.values()]
