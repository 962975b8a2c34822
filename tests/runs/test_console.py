"""The console log's reader (runs/console.py): Miles' metric lines found among any others, each dict read
without evaluating it and placed at the step key the trackers log it under, several files merged, a
growing file waited for; on logs Miles' own logging wrote (tests/fixtures/miles-console/, its README says
how) and on hostile ones."""

from __future__ import annotations

import math
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO, run_cli
from judge_fixture import judged_project
from metrics_manual.api import judge
from metrics_manual.judge.judging import judged_keys
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs import console, lines
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.follow import RunFollower
from metrics_manual.runs.read import Run, RunInputError, read_run
from miles_runs import CATALOG, MILES, PROFILE, bad, miles_profile

CONSOLE = REPO / "tests" / "fixtures" / "miles-console"
STEP_KEYS = {
    "train": "train/step",
    "rollout": "rollout/step",
    "perf": "rollout/step",
    "multi_turn": "rollout/step",
    "eval": "eval/step",
}


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return miles_profile(tmp_path_factory)


def logged(message: str, s: int = 0, where: str = "metrics.py:89", name: str = "rollout_manager") -> str:
    """A line as Miles' logging prints it behind Ray's prefix (second `s` of the run)."""
    return f"(RolloutManager pid=4100) [2026-11-30 01:00:{s:02d}.000 {name}] {where} - {message}\n"


def read_console(tmp_path: Path, *text: str | bytes, name: str = "run.log") -> Run:
    f = tmp_path / name
    f.write_bytes(b"".join(t.encode("utf-8") if isinstance(t, str) else t for t in text))
    return read_run([f], STEP_KEYS, "console")


def values(run: Run, key: str) -> dict[int, float]:
    return dict(run.series[key].items()) if key in run.series else {}


def found(run: Run) -> list[tuple[int, str, str]]:
    return [(p.line, p.code.id, p.severity) for p in run.problems]


# --- the logs Miles' own logging wrote ---------------------------------------------------------------


def test_the_console_miles_wrote_reads_as_the_event_log_of_the_same_run() -> None:
    events = read_run([MILES / "healthy" / "events"], STEP_KEYS)
    for paths in ([CONSOLE / "healthy" / "run.log"], [CONSOLE / "healthy" / "workers"]):
        run = read_run(paths, STEP_KEYS)
        assert run.formats == ["console"] and run.problems == [] and run.invalid == {}, paths
        assert {k: values(run, k) for k in events.series} == {k: values(events, k) for k in events.series}
        # What the event log of ../miles-writers lacks: eval every 10 rollouts (rollout 30's skipped, a
        # warning line, no metric line) and NumPy's scalars of the multi-turn line.
        assert sorted(values(run, "eval/aime")) == [0, 10, 20, 40, 50, 60, 70, 80, 90]
        assert values(run, "multi_turn/multi_turn_metric/round_number_max")[5] == 3.0
        assert values(run, "multi_turn/multi_turn_metric/round_number_mean")[0] == 1.875


def test_the_driver_s_console_and_the_actors_files_are_one_run(profile: ProfileExport) -> None:
    run = read_run([CONSOLE / "healthy"], STEP_KEYS, keys=judged_keys(profile))
    assert run.conflicts == {} and run.relogged == {} and run.problems == []
    j = judge(profile, run)
    assert bad(j) == {} and j.exit_code == 0


def test_a_resumed_process_s_console_is_a_later_life(profile: ProfileExport) -> None:
    run = read_run([CONSOLE / "resume"], STEP_KEYS, keys=judged_keys(profile))
    later = str(CONSOLE / "resume" / "resumed.log")
    assert run.relogged[(later, "train/step")] == list(range(41, 61)) and run.conflicts == {}
    j = judge(profile, run)
    assert bad(j) == {"train/grad_norm": "fail"}
    assert [(p.step, p.value) for r in j.results for p in r.failing_steps] == [(50, 99.0)]


@pytest.mark.slow  # four commands: the tests over every form hold the same in the quick loop
def test_judge_follow_and_derive_take_a_console_log(tmp_path: Path) -> None:
    project = judged_project(tmp_path / "p", CATALOG, PROFILE)
    run_log = str(CONSOLE / "healthy" / "run.log")
    judged = run_cli("judge", "--profile", "judged", run_log, cwd=project)
    assert judged.returncode == 0 and "0 fail, 0 error" in judged.stdout, judged.stdout + judged.stderr
    followed = run_cli("judge", "--follow", "--idle", "0.2", "--profile", "judged", run_log, cwd=project)
    assert followed.returncode == 0 and followed.stdout == judged.stdout, followed.stderr
    hostile = tmp_path / "hostile.log"
    hostile.write_text((CONSOLE / "healthy" / "run.log").read_text("utf-8") + logged("perf 100: {'x': [}"), "utf-8")
    refused = run_cli("judge", "--profile", "judged", str(hostile), cwd=project)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert (
        f"{hostile}:{len(hostile.read_text('utf-8').splitlines())}:" in refused.stdout and "[MM504]" in refused.stdout
    )
    first = CONSOLE / "resume" / "first.log"  # rollouts 0-60 of the same run
    derived = run_cli("derive", "--profile", "judged", f"--run=a={run_log}", f"--run=b={first}", cwd=project)
    assert derived.returncode == 0, derived.stdout + derived.stderr
    assert "train/grad_norm [0] band: 161 values (every step of each run)" in derived.stdout


# --- the metric lines, and the others ----------------------------------------------------------------


def test_each_metric_line_is_placed_at_the_step_key_the_trackers_log_it_under(tmp_path: Path) -> None:
    run = read_console(
        tmp_path,
        logged("step 4: {'train/loss': 0.5, 'train/step': 4}", where="log_utils.py:542", name="actor_cell0_rank0"),
        logged("critic-step 4: {'train/critic-loss': 0.25, 'train/step': 4}", where="log_utils.py:542"),
        logged("perf 2: {'rollout/raw_reward': 0.75, 'perf/rollout_time': 20.5}"),  # no rollout/step in it
        logged("perf 2: {'perf/step_time': 30.5}", where="train_metric_utils.py:56"),
        logged("rollout 2: {'rollout/log_probs': -0.5}", where="log_utils.py:123"),
        logged("multi_turn 2: {'multi_turn/x': np.float64(2.5)}", where="log_utils.py:123"),
        logged("eval 2: {'eval/aime': 0.25}", where="metrics.py:53"),
        logged("step 5: {'train/loss': 9.0, 'train/step': 6}", where="log_utils.py:542"),  # its N and its dict disagree
        logged("perf 3: {'train/orphan': 1.0}"),  # a key of another step key, which the line lacks
    )
    assert values(run, "train/loss") == {4: 0.5} and values(run, "train/critic-loss") == {4: 0.25}
    assert values(run, "rollout/raw_reward") == {2: 0.75} and values(run, "perf/rollout_time") == {2: 20.5}
    assert values(run, "perf/step_time") == {2: 30.5} and values(run, "rollout/log_probs") == {2: -0.5}
    assert values(run, "multi_turn/x") == {2: 2.5} and values(run, "eval/aime") == {2: 0.25}
    assert sorted(values(run, "rollout/step")) == [2, 3] and sorted(values(run, "eval/step")) == [2]
    assert found(run) == [(8, "MM506", "error"), (9, "MM507", "warning")]
    assert run.problems[0].message == "not a console metric line: its step is 5 but its train/step is 6; it was skipped"
    assert "train/orphan is logged without its step key train/step (with rollout/step)" in run.problems[1].message


def test_only_miles_metric_lines_are_read_among_the_others(tmp_path: Path) -> None:
    run = read_console(
        tmp_path,
        "2026-11-30 01:00:00,000\tINFO worker.py:1821 -- Started a local Ray instance.\n",
        logged("eval 3 skipped: fleet_busy", where="metrics.py:68"),  # log_eval_skip: no dict
        logged("config: {'train/loss': 99.0}"),  # a dict, not a metric line's message
        "step 3: {'train/loss': 99.0, 'train/step': 3}\n",  # printed without Miles' logging format
        "[2026-11-30 01:00:00 TP0] Decode batch. #running-req: 8, #token: 512, gen throughput (token/s): 1.0\n",
        "Rollout 3:  50%|#####     | 32/64 [00:03<00:03]\r" + logged("perf 3: {'rollout/raw_reward': 0.5}"),
        "\x1b[36m(MegatronTrainRayActor pid=4101, ip=10.0.0.2)\x1b[0m "
        + logged("step 3: {'train/loss': 0.25, 'train/step': 3}", where="log_utils.py:542").split(") ", 1)[1],
        # Behind another prefix than Ray's: kubectl logs --timestamps, srun --label.
        "2026-11-30T01:00:04.000000001Z " + logged("rollout 4: {'rollout/raw_reward': 0.75}", 4),
        "0: " + logged("rollout 5: {'rollout/raw_reward': 0.5}", 5),
    )
    assert values(run, "rollout/raw_reward") == {3: 0.5, 4: 0.75, 5: 0.5} and values(run, "train/loss") == {3: 0.25}
    assert run.problems == []


# --- the values: read, never evaluated ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("printed", "value"),
    [
        ("0.5", 0.5),
        ("1e-06", 1e-06),
        ("3", 3.0),
        ("-2", -2.0),
        ("nan", math.nan),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ("np.float64(0.5)", 0.5),
        ("np.float64(-inf)", -math.inf),
        ("np.float64(nan)", math.nan),
        ("np.float32(0.1)", struct.unpack("f", struct.pack("f", 0.1))[0]),  # the float32 a tracker gets
        ("np.int64(7)", 7.0),
    ],
)
def test_a_number_python_or_numpy_prints_is_read(printed: str, value: float, tmp_path: Path) -> None:
    run = read_console(tmp_path, logged(f"perf 1: {{'rollout/x': {printed}, 'rollout/y': 1.0}}"))
    got = values(run, "rollout/x")[1]
    assert (math.isnan(got) and math.isnan(value)) or got == value
    assert run.problems == [] and run.invalid == {}


@pytest.mark.parametrize(
    ("printed", "said"),
    [
        ("'high'", "'high'"),
        ("None", "None"),
        ("True", "True"),
        ("np.True_", "True"),
        ("[0.5, 0.5]", "[0.5, 0.5]"),
        ("{'a': 0.5}", "{'a': 0.5}"),
        ("tensor(0.5000, device='cuda:0')", "tensor(0.5000, device='cuda:0')"),
        ("np.str_('0.5')", "np.str_('0.5')"),
        ("1e999", "1e999 (out of float range)"),
        ("1" * 400, "an integer out of float range"),
        ("x", "x"),
    ],
)
def test_a_value_that_is_no_number_is_said_so_with_its_text(printed: str, said: str, tmp_path: Path) -> None:
    run = read_console(tmp_path, logged(f"perf 1: {{'rollout/x': {printed}, 'rollout/y': 1.0}}"))
    assert math.isnan(values(run, "rollout/x")[1]) and values(run, "rollout/y") == {1: 1.0}
    assert run.invalid == {"rollout/x": {1: said}}
    assert found(run) == [(1, "MM508", "warning")]
    assert run.problems[0].message == f"rollout/x: not a number at step 1: {said} (an error of its expectations)"


def test_a_dict_that_tries_to_run_code_is_text(tmp_path: Path) -> None:
    touched = tmp_path / "touched"
    code = f"__import__('os').system('touch {touched}')"
    run = read_console(tmp_path, logged(f"perf 1: {{'rollout/x': {code}, 'rollout/y': eval('1')}}"))
    assert not touched.exists()
    assert run.invalid == {"rollout/x": {1: code[:60] + "..."}, "rollout/y": {1: "eval('1')"}}


# --- hostile lines: findings, never a traceback ------------------------------------------------------


@pytest.mark.parametrize(
    ("dict_text", "at", "words"),  # at: where in the dict's text the finding points
    [
        ("{'rollout/x': [1, 2}", 19, "'}' where ']' was expected"),
        ("{'rollout/x': 1.0) }", 17, "')' where no bracket is open"),
        ("{'rollout/x': 1.0", 17, "the line ends inside the dict"),
        ("{'rollout/x': 'never closed}", 14, "a string that is never closed"),
        ("{'rollout/x': 1.0} and more", 18, "text after the dict"),
        ("{1.5: 2.0}", 1, "a key that is not a string"),
        ("{b'rollout/x': 2.0}", 1, "a key that is bytes, not a string"),
        ("{'rollout/x' 2.0}", 13, "expected ':' after a key, found '2.0'"),
        ("{'rollout/x': }", 14, "a key without a value"),
        ("{'a': " + "[" * 200_000 + "}", 200_006, "'}' where ']' was expected"),
    ],
)
def test_a_metric_line_that_is_no_dict_repr_is_a_corrupt_line(
    dict_text: str, at: int, words: str, tmp_path: Path
) -> None:
    run = read_console(tmp_path, logged(f"perf 1: {dict_text}"), logged("perf 2: {'rollout/x': 2.0}"))  # newline-ended
    assert values(run, "rollout/x") == {2: 2.0}
    assert found(run) == [(1, "MM504", "error")]
    assert run.problems[0].message == f"corrupt line: not a dict's repr: {words}; it was skipped"
    assert run.problems[0].col == len(logged("perf 1: ").rstrip("\n")) + at + 1


def test_deep_nesting_odd_unicode_and_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    run = read_console(
        tmp_path,
        logged(f"perf 1: {{'rollout/deep': {deep}, 'rollout/x': 1.0}}"),
        logged("perf 2: {'rollout/\u202ex\u0301\U0001f600': 2.0, 'rollout/\\x1b[31mred': 3.0}"),
        logged("perf 3: {'rollout/\\ud800': 2.0}"),  # a lone surrogate: not valid Unicode
        logged("perf 4: {'rollout/x': 4.0}").encode().replace(b"4.0", b"4.0, 'rollout/z': '\xff'"),
    )
    assert values(run, "rollout/x") == {1: 1.0} and run.invalid["rollout/deep"][1].startswith("[[[[")
    assert values(run, "rollout/\u202ex\u0301\U0001f600") == {2: 2.0}
    assert values(run, "rollout/\x1b[31mred") == {2: 3.0}  # the key as Python wrote it: escaped when shown
    assert found(run) == [(1, "MM508", "warning"), (3, "MM512", "error"), (4, "MM504", "error")]
    assert "not UTF-8 (byte 0xff)" in run.problems[2].message


def test_a_line_longer_than_the_cap_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "MAX_LINE", 1 << 10)
    run = read_console(
        tmp_path, logged("perf 1: {'rollout/x': [" + "1, " * 1000 + "]}"), logged("perf 2: {'rollout/x': 2.0}")
    )
    assert values(run, "rollout/x") == {2: 2.0} and found(run) == [(1, "MM510", "error")]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("{}[]()'\",:.-+ e1nafilrstxNp_\\\x1bé\u202e"), max_size=60), st.booleans())
def test_any_text_after_a_metric_line_s_head_is_read_or_a_finding(text: str, ended: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "run.log"
        f.write_text(logged("perf 1: {" + text).rstrip("\n") + ("\n" if ended else ""), "utf-8")
        run = read_run([f], STEP_KEYS, "console")
    assert {p.code.id for p in run.problems} <= {"MM504", "MM505", "MM507", "MM508", "MM512", "MM518"}


# --- a growing file, a cut line, Ray's folding, detection ---------------------------------------------


def test_a_line_no_newline_ends_waits_while_the_run_writes(tmp_path: Path) -> None:
    f = tmp_path / "run.log"
    whole = logged("perf 1: {'rollout/x': 1.0}") + logged("perf 2: {'rollout/x': 2.0}", s=1)
    log, out = console.ConsoleLog(f, "run.log"), Collector(STEP_KEYS)
    out.begin("run.log")
    for cut in (20, 85, len(whole) - 3, len(whole)):  # inside the prefix, the head, the dict; then whole
        f.write_text(whole[:cut], "utf-8")
        log.read(out, ended=False)
        assert out.problems == [] and out.cut_files == []
    assert dict(out.series["rollout/x"].items()) == {1: 1.0, 2: 2.0}
    assert out.times is not None and out.times[1] - out.times[0] == 1.0  # its span: the lines' times


def test_follow_takes_a_file_once_a_miles_line_appears_in_its_head(tmp_path: Path) -> None:
    # Its first line whole settles nothing: any line of the head may tell a console log.
    f = tmp_path / "run.log"
    f.write_text("2026-11-30 01:00:00,000\tINFO worker.py:1821 -- Started a local Ray instance.\n", "utf-8")
    follower = RunFollower([tmp_path], STEP_KEYS)
    assert not follower.poll()
    with f.open("a", encoding="utf-8") as fh:
        fh.write(logged("perf 1: {'rollout/x': 1.0}"))
    assert follower.poll() and values(follower.snapshot(), "rollout/x") == {1: 1.0}


@pytest.mark.parametrize(
    ("last", "cut", "read"),
    [
        ("perf 9: {'rollout/x': 9.0", True, False),  # inside the dict
        ("perf 9: {'rollout/x': 9.0}", False, True),  # whole: read
        ("perf 9: {'rollout/x': 9.0}\x1b[32m [repeated 3x acr", True, False),  # inside Ray's folding
        ("perf 9", True, False),  # inside the head
        ("", True, False),  # before the message
        ("the run is done", False, False),  # a message that is no metric line
    ],
)
def test_a_complete_file_s_last_line_cut_inside_a_metric_line_is_a_warning(
    last: str, cut: bool, read: bool, tmp_path: Path
) -> None:
    run = read_console(tmp_path, logged("perf 8: {'rollout/x': 8.0}"), logged(last, s=9).rstrip("\n"))
    assert found(run) == ([(2, "MM505", "warning")] if cut else [])
    assert run.unfinished == ({"rollout/step": 8} if cut else {})
    assert values(run, "rollout/x") == ({8: 8.0, 9: 9.0} if read else {8: 8.0})
    assert (
        read_console(tmp_path, logged("perf 8: {'rollout/x': 8.0}"), "[2026-11-30 01:0").problems[0].code.id == "MM505"
    )


def test_a_line_ray_folded_is_read_with_a_warning(tmp_path: Path) -> None:
    # ray/_private/ray_logging.py DedupState.formatted, coloured: the first time, with its advice.
    folded = "\x1b[32m [repeated 3x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 ...)\x1b[0m"
    run = read_console(tmp_path, logged("perf 1: {'rollout/x': 1.0}").rstrip("\n") + folded + "\n")
    assert values(run, "rollout/x") == {1: 1.0} and found(run) == [(1, "MM518", "warning")]
    assert run.problems[0].message.startswith("Ray folded 3 alike lines of other processes into this metric line")


def test_a_console_is_told_by_a_miles_line_in_its_head(tmp_path: Path) -> None:
    noise = "pip: Collecting torch\n" * 4000  # 88 KB before Miles' first line
    f = tmp_path / "run.log"
    f.write_text(noise + logged("perf 1: {'rollout/x': 1.0}"), "utf-8")
    with pytest.raises(RunInputError, match="not a metrics file of a known form"):
        read_run([f], STEP_KEYS)
    assert values(read_run([f], STEP_KEYS, "console"), "rollout/x") == {1: 1.0}
    f.write_text(noise[: 22 * 400] + logged("perf 1: {'rollout/x': 1.0}"), "utf-8")
    assert read_run([f], STEP_KEYS).formats == ["console"]


# --- the judging page says it in the code's words ----------------------------------------------------


def _words(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def test_the_judging_page_states_the_lines_and_their_steps_in_the_code_s_words() -> None:
    page = _words((REPO / "docs" / "judging.md").read_text("utf-8"))
    doc = console.__doc__ or ""
    table = [row for row in doc.splitlines() if row.startswith("| `")]
    assert len(table) == 5
    for row in table:
        assert _words(row) in page, row
    steps = doc.split("The trackers' rollout/step")[1].split("\n\n")[0]
    assert _words("The trackers' rollout/step" + steps) in page
    assert "--wandb-always-use-train-step" in page
