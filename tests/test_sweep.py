"""`idemsim sweep`: grids, seeds, rates with intervals, executors, and the shipped sweeps that teach."""

from __future__ import annotations

import csv
import io
import json

import pytest

from idemsim.base.errors import InputError
from idemsim.runners import sweep as sw
from idemsim.scenario.schema import load, sweep_names


def small(name: str, vary: list[str], designs: list[str], seeds: int = 10, sets: list[str] | None = None):
    return sw.Sweep(load(name), [sw.parse_vary(v) for v in vary], designs, seeds, sets=list(sets or []))


def rows_by(result, field: str) -> dict:
    return {(r["design"], r[field]): r for r in result.rows}


class TestTheGrid:
    def test_a_list_of_values_is_read_as_set_reads_them(self):
        """FIELD=V1,V2 keeps each value's text and reads it as TOML (or text), as --set does."""
        axis = sw.parse_vary("client.jitter=none,full")
        assert axis.texts == ("none", "full") and axis.values == ["none", "full"]
        assert sw.parse_vary("api.ttl=1,2.5").values == [1, 2.5]

    def test_a_range_includes_its_stop_and_keeps_round_numbers(self):
        """START:STOP:STEP lists every step, the stop included, without float noise."""
        assert sw.parse_vary("network.response.loss=0:0.3:0.1").texts == ("0.0", "0.1", "0.2", "0.3")
        assert sw.parse_vary("api.lease=1:4:1").texts == ("1", "2", "3", "4")

    def test_several_axes_make_a_product_the_last_varying_fastest(self):
        """Two axes give every combination, in order."""
        points = sw.grid([sw.parse_vary("a.x=1,2"), sw.parse_vary("b.y=p,q")])
        assert points == [{"a.x": "1", "b.y": "p"}, {"a.x": "1", "b.y": "q"}, {"a.x": "2", "b.y": "p"},
                          {"a.x": "2", "b.y": "q"}]

    @pytest.mark.parametrize("text", ["loss", "=1,2", "a.b=", "a.b=3:1:1", "a.b=0:1:0", "a.b=0:nan:1",
                                      "a.b=1,,2"])
    def test_a_malformed_grid_is_one_input_error(self, text):
        """A --vary that is not FIELD=V1,… or FIELD=START:STOP:STEP is refused with a reason."""
        with pytest.raises(InputError):
            sw.parse_vary(text)


class TestSeedsAndRates:
    def test_a_runs_seed_is_a_stable_hash_of_base_point_design_and_replicate(self):
        """The seed does not depend on Python's hash randomisation, and each input changes it."""
        seed = sw.derive_seed(1, {"api.ttl": 5}, "same-tx", 0)
        assert seed == sw.derive_seed(1, {"api.ttl": 5}, "same-tx", 0) == 42701667998015
        assert len({seed, sw.derive_seed(2, {"api.ttl": 5}, "same-tx", 0),
                    sw.derive_seed(1, {"api.ttl": 6}, "same-tx", 0), sw.derive_seed(1, {"api.ttl": 5}, "naive", 0),
                    sw.derive_seed(1, {"api.ttl": 5}, "same-tx", 1)}) == 5

    def test_the_wilson_interval_is_the_textbook_one(self):
        """0 of 200 is 0 with an upper bound near 1.9 %; 12 of 50 brackets 24 %."""
        assert sw.wilson(0, 200) == {"rate": 0.0, "low": 0.0, "high": 0.018845}
        assert sw.wilson(12, 50) == {"rate": 0.24, "low": 0.142974, "high": 0.374127}

    def test_percentiles_interpolate_between_ranks(self):
        """The 50th and 95th percentiles as NumPy's default computes them."""
        assert (sw.percentile([1, 2, 3, 4], 50), sw.percentile(range(1, 21), 95)) == (2.5, 19.05)


@pytest.mark.slow
class TestExecutors:
    def test_the_json_is_the_same_inline_on_two_processes_and_on_a_dask_cluster(self):
        """The same sweep gives byte-identical JSON whatever runs it (a LocalCluster on loopback included)."""
        spec = small("loss", ["network.response.loss=0,0.3"], ["naive", "same-tx"], seeds=8)
        inline = json.dumps(sw.run(spec).to_json())
        with sw.executor_for(2) as pool:
            processes = json.dumps(sw.run(spec, pool).to_json())
        with sw.executor_for(2, "local") as cluster:
            dask = json.dumps(sw.run(spec, cluster).to_json())
        assert inline == processes == dask

    def test_an_unreachable_scheduler_is_one_line(self):
        """--dask with an address where no scheduler answers is an InputError."""
        with pytest.raises(InputError, match="cannot reach the scheduler"):
            with sw.executor_for(1, "tcp://127.0.0.1:9", connect_timeout=1):
                pass


class TestTheShippedSweeps:
    def test_they_are_not_stories_but_run_by_name(self):
        """scenarios/sweeps holds the five teaching sweeps; `idemsim list` does not show them."""
        from idemsim.scenario.schema import builtin_names

        assert sweep_names() == ["herd", "lease", "loss", "pool", "ttl"]
        assert not set(sweep_names()) & set(builtin_names())
        assert all(load(name).sweep is not None for name in sweep_names())

    def test_loss_raises_naives_double_charges_and_no_keyed_designs(self):
        """With half the answers lost, naive double-charges often; same-tx and recovery-points never."""
        result = sw.run(small("loss", ["network.response.loss=0,0.5"], ["naive", "same-tx", "recovery-points"], 40))
        rows = rows_by(result, "network.response.loss")
        assert rows[("naive", 0.0)]["double_charge"]["rate"] == 0
        assert rows[("naive", 0.5)]["double_charge"]["rate"] > 0.3
        assert rows[("same-tx", 0.5)]["double_charge"]["rate"] == rows[("recovery-points", 0.5)]["double_charge"][
            "rate"] == 0

    @pytest.mark.slow
    def test_ttl_trades_duplicates_for_records_held(self):
        """A 1 s retention lets retries charge again; 60 s does not, and keeps every record."""
        result = sw.run(small("ttl", ["api.ttl=1,60"], ["same-tx"], 20))
        rows = rows_by(result, "api.ttl")
        assert rows[("same-tx", 1)]["double_charge"]["rate"] > 0.5
        assert rows[("same-tx", 60)]["double_charge"]["rate"] == 0
        assert rows[("same-tx", 60)]["keys_held"] > rows[("same-tx", 1)]["keys_held"]

    def test_a_lease_below_the_handlers_time_charges_twice(self):
        """committed-first double-charges with a 1 s lease on a 2 s handler; with 5 s it does not, but waits."""
        result = sw.run(small("lease", ["api.lease=1,5"], ["committed-first", "recovery-points"], 20))
        rows = rows_by(result, "api.lease")
        assert rows[("committed-first", 1)]["double_charge"]["rate"] == 1
        assert rows[("committed-first", 5)]["double_charge"]["rate"] == 0
        assert rows[("recovery-points", 1)]["double_charge"]["rate"] == 0
        assert rows[("committed-first", 5)]["time_to_answer"]["p95"] > rows[("committed-first", 1)]["time_to_answer"][
            "p50"]

    @pytest.mark.slow
    def test_herd_jitter_and_a_budget_lower_the_peak_after_the_outage(self):
        """After the 30 s outage: all thousand retry at once without jitter, far fewer with it, none with a budget."""
        spec = sw.Sweep(load("herd"), sw.axes_of(load("herd").sweep.vary), ["same-tx"], 3)
        peaks = {(r["client.jitter"], r["client.retry_budget"] is not None): r["peak_after_outage"]["p50"]
                 for r in sw.run(spec).rows}
        assert peaks[("none", False)] == 1000
        assert peaks[("none", False)] > peaks[("full", False)] > peaks[("full", True)]
        assert peaks[("full", True)] == 0

    @pytest.mark.slow
    def test_pool_same_tx_duplicates_hold_connections_committed_first_none(self):
        """Under same-tx waiting duplicates hold connections of the pool; under committed-first never."""
        result = sw.run(small("pool", ["client.duplicate_rate=0.6"], ["same-tx", "committed-first"], 5))
        rows = rows_by(result, "client.duplicate_rate")
        assert rows[("same-tx", 0.6)]["waiting_peak"]["max"] >= 3
        assert rows[("committed-first", 0.6)]["waiting_peak"]["max"] == 0
        assert rows[("same-tx", 0.6)]["pool_wait_max"]["p95"] > rows[("committed-first", 0.6)]["pool_wait_max"]["p95"]


class TestTheCommand:
    def test_json_has_the_documented_shape(self, cli):
        """version, scenario, seeds, vary and rows, each row with the point, runs and rates with intervals."""
        result = cli("sweep", "loss", "--vary", "network.response.loss=0,0.2", "--design", "naive", "--seeds", "5",
                     "--format", "json", "--workers", "1", "--quiet")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert {"version", "scenario", "seeds", "vary", "rows"} <= set(doc)
        assert doc["vary"] == {"network.response.loss": [0, 0.2]} and doc["seeds"] == 5
        row = doc["rows"][1]
        assert (row["design"], row["network.response.loss"], row["runs"]) == ("naive", 0.2, 5)
        assert set(row["double_charge"]) == {"rate", "low", "high"}
        assert set(row["time_to_answer"]) == {"p50", "p95"}

    def test_csv_flattens_the_same_rows(self, cli):
        """--format csv has one row per point and design, nested figures as dotted columns."""
        result = cli("sweep", "loss", "--vary", "network.response.loss=0,0.2", "--design", "naive",
                     "--design", "same-tx", "--seeds", "3", "--format", "csv", "--workers", "1")
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        assert len(rows) == 4
        assert {"design", "network.response.loss", "runs", "double_charge.rate", "double_charge.low",
                "time_to_answer.p95"} <= set(rows[0])

    @pytest.mark.slow
    def test_output_and_plot_files_are_written(self, cli, tmp_path):
        """-o writes the JSON, --plot the figure; the text table is not printed then."""
        out, plot = tmp_path / "loss.json", tmp_path / "loss.png"
        result = cli("sweep", "loss", "--vary", "network.response.loss=0,0.3", "--design", "naive", "--seeds", "3",
                     "--format", "json", "-o", out, "--plot", plot, "--workers", "1")
        assert result.exit_code == 0, result.output
        assert json.loads(out.read_text())["rows"] and plot.read_bytes().startswith(b"\x89PNG")

    @pytest.mark.parametrize("args, message", [
        (["loss", "--vary", "network.response.los=0,1"], "unknown field 'network.response.los'"),
        (["loss", "--vary", "loss"], "expected FIELD=V1,V2"),
        (["loss", "--design", "magic"], "unknown design 'magic'"),
        (["lost-response"], "nothing to vary"),
        (["loss", "--plot", "out.gif"], "a figure is saved as .png, .svg, .pdf"),
    ])
    def test_bad_input_is_one_line(self, cli, one_line, args, message):
        """A bad grid, design, scenario or file is one line, exit 2, before anything runs."""
        assert message in one_line(cli("sweep", *args, "--seeds", "1", "--workers", "1"))


class TestTheFigure:
    @pytest.mark.parametrize("lang, field, measures", [
        ("en", "response loss rate", ["double charge (rate)", "attempts per purchase"]),
        ("ja", "応答が失われる確率", ["二重課金の割合", "1 件の購入あたりの送信数"]),
    ])
    def test_the_axes_are_labelled_in_words_the_fields_path_in_small_print(self, lang, field, measures):
        """The varied field and the measures are named in the figure's language; the field's path is printed
        once, smaller, under its words."""
        from idemsim.views import sweep_plot

        result = sw.run(small("loss", ["network.response.loss=0,0.3"], ["naive", "same-tx"], 2))
        fig = sweep_plot.figure(result, load("loss").sweep, lang)
        assert [a.get_ylabel() for a in fig.axes] == measures
        assert [a.get_xlabel() for a in fig.axes] == ["", field]
        small_print = [t for t in fig.axes[-1].texts if t.get_text() == "network.response.loss"]
        assert len(small_print) == 1
        assert small_print[0].get_fontsize() < fig.axes[-1].xaxis.label.get_fontsize()

    def test_each_design_keeps_its_name_and_its_style(self):
        """A line is labelled with its design's name and drawn in the design's colour, dashes and marker."""
        from idemsim.views import sweep_plot
        from idemsim.views.styles import design_style

        result = sw.run(small("loss", ["network.response.loss=0,0.3"], ["same-tx", "committed-first"], 2))
        fig = sweep_plot.figure(result, load("loss").sweep, "ja")
        lines = [(line.get_label(), line.get_color(), line.get_marker()) for line in fig.axes[1].get_lines()]
        assert lines == [(d, design_style(d).colour, design_style(d).marker) for d in ("same-tx", "committed-first")]

    def test_a_field_without_words_is_named_by_its_path(self):
        """A field the catalogue has no words for (one a user varies) is labelled with its path, once."""
        from idemsim.views import sweep_plot

        assert sweep_plot.field_words("client.multiplier", "ja") == "client.multiplier"
        assert sweep_plot.field_words("api.ttl", "en") == "retention of a key record, TTL (s)"

    def test_sweep_prints_where_it_drew_the_figure(self, cli, tmp_path):
        """`idemsim sweep --plot F` prints F after its table."""
        plot = tmp_path / "loss.png"
        result = cli("sweep", "loss", "--vary", "network.response.loss=0,0.3", "--design", "naive", "--seeds", "2",
                     "--workers", "1", "--quiet", "--plot", plot)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[-1] == str(plot) and plot.read_bytes().startswith(b"\x89PNG")


class TestInJapanese:
    def test_the_figure_has_the_scenarios_japanese_title_and_the_marks_japanese_labels(self):
        """Under lang="ja" the figure's title is the [ja] title and the retry-window mark reads in Japanese."""
        from idemsim.views import sweep_plot

        loaded = load("ttl")
        result = sw.run(small("ttl", ["api.ttl=1,60"], ["same-tx"], 2))
        fig = sweep_plot.figure(result, loaded.sweep, "ja")
        texts = {t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))}
        assert loaded.text("title", "ja") in texts and "クライアントが再試行を続ける期間" in texts
        assert not any("retry window" in t for t in texts)

    def test_the_table_speaks_japanese(self, cli):
        """`idemsim sweep --lang ja` heads its table and its columns in Japanese."""
        result = cli("sweep", "loss", "--vary", "network.response.loss=0,0.3", "--design", "naive", "--seeds", "2",
                     "--workers", "1", "--quiet", "--lang", "ja")
        assert result.exit_code == 0, result.output
        assert "1 点につき 2 回の実行" in result.output and "二重課金の割合" in result.output


def test_a_label_wraps_into_even_lines():
    """A sweep's y label is wrapped into as few lines as its width needs, as even as they can be: never a last
    line of one short word (``key records held at the`` / ``end``)."""
    from idemsim.views.sweep_plot import balanced

    assert balanced("key records held at the end", 26) == "key records\nheld at the end"
    assert balanced("double charge (rate)", 26) == "double charge (rate)"

