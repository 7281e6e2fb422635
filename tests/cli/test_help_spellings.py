"""One spelling, one meaning and one default per idea across every command's --help.

The walk covers every command registered on the ``vareval`` group, including
groups of subcommands and commands added later, so a new command that spells
an idea differently fails here.
"""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from vareval.cli import main

# Spellings of one idea; the first is the one every command uses.
SYNONYMS = [
    ("--lower-is-better", "--minimize", "--maximize", "--higher-is-better", "--smaller-is-better"),
    ("--resamples", "--n-boot", "--n-sim", "--n-resamples", "--n-samples", "--n-bootstrap",
     "--bootstrap-samples", "--n-permutations", "--draws"),
    ("--system", "--systems"),
    ("--confidence", "--ci", "--level", "--confidence-level", "--conf", "--cl"),
    ("--seed", "--random-state", "--random-seed", "--rng"),
    ("--metric", "--metrics", "--score", "--scores"),
    ("--by", "--group-by", "--groupby", "--method-column"),
    ("--pair-on", "--pair", "--pair-by", "--match-on", "--paired-on"),
    ("--baseline", "--control", "--reference-method"),
    ("--alpha", "--significance-level", "--sig-level"),
    ("--all-pairs", "--pairwise", "--all-vs-all"),
    ("--correction", "--adjust", "--p-adjust", "--multiple-testing"),
    ("--ci-method", "--ci-type", "--interval-method"),
    ("--json", "--as-json"),
]  # fmt: skip

# Ideas whose default must be the same wherever they appear.
DEFAULTS = {"--seed": "0", "--confidence": "0.95", "--alpha": "0.05"}

_OPTION = re.compile(r"^  (?:-\w, )?(--[\w-]+)(?:\s*/\s*(--[\w-]+))?")


def commands(group: click.Group = main, prefix: tuple = ()):
    """Every leaf command as (path, command), walking nested groups."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def help_options(path, group=main) -> dict[str, str]:
    """The options a person sees in ``--help``: flag -> its help text (one line)."""
    result = CliRunner().invoke(group, [*path, "--help"])
    assert result.exit_code == 0, result.output
    text = result.output.split("Options:", 1)[1]
    options, current = {}, None
    for line in text.splitlines():
        m = _OPTION.match(line)
        if m:
            current = m.group(1)
            options[current] = line
            if m.group(2):
                options[m.group(2)] = line
        elif current and line.startswith("    "):
            options[current] += " " + line.strip()
    return {k: " ".join(v.split()) for k, v in options.items()}


def spelling_problems(group=main) -> list[str]:
    """Two spellings of one idea, in one command or across commands, and split defaults."""
    seen = {p: help_options(p, group) for p, _ in commands(group)}
    problems = []
    for spellings in SYNONYMS:
        used = {s: [" ".join(p) for p, opts in seen.items() if s in opts] for s in spellings}
        used = {s: where for s, where in used.items() if where}
        if len(used) > 1:
            problems.append(f"one idea, {len(used)} spellings: {used}")
    for flag, default in DEFAULTS.items():
        for path, opts in seen.items():
            if flag in opts:
                m = re.search(r"\[default: ([^\]]+)\]", opts[flag])
                if m is None or m.group(1).strip() != default:
                    problems.append(
                        f"{' '.join(path)} {flag}: default "
                        f"{m.group(1) if m else 'not shown'}, elsewhere {default}"
                    )
    return problems


def test_every_command_spells_each_idea_once_with_one_default():
    assert list(commands()), "no commands found"
    assert spelling_problems() == []


def test_the_check_catches_two_spellings_and_a_split_default():
    @click.group()
    def toy():
        pass

    @toy.command()
    @click.option("--minimize", is_flag=True)
    @click.option("--seed", type=int, default=1, show_default=True)
    def one(minimize, seed):
        pass

    @toy.command()
    @click.option("--lower-is-better", is_flag=True)
    @click.option("--n-boot", type=int)
    @click.option("--resamples", type=int)
    def two(lower_is_better, n_boot, resamples):
        pass

    problems = spelling_problems(toy)
    assert len(problems) == 3
    assert any("--minimize" in p and "--lower-is-better" in p for p in problems)
    assert any("--n-boot" in p and "--resamples" in p for p in problems)
    assert any("one --seed: default 1" in p for p in problems)


def test_every_stochastic_command_seeds_with_0_by_default():
    with_seed = [p for p, c in commands() if any(o.name == "seed" for o in c.params)]
    assert {"paired", "best-of-k", "significance", "aggregate", "variance"} <= {
        " ".join(p) for p in with_seed
    }
    for path, command in commands():
        for param in command.params:
            if param.name == "seed":
                assert param.default == 0, path


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize(
    ("old", "new", "args"),
    [
        ("--n-sim", "--resamples",
         ["best-of-k", "--metric", "accuracy", "--by", "method", "--n-sim", "500"]),
        ("--n-boot", "--resamples",
         ["paired", "--metric", "accuracy", "--by", "method", "--pair-on", "seed",
          "--compare", "mlp,logreg", "--n-boot", "500"]),
        ("--minimize", "--lower-is-better",
         ["best-of-k", "--metric", "accuracy", "--by", "method", "--resamples", "500",
          "--minimize"]),
        ("--repeated", "--test corrected",
         ["paired", "--metric", "accuracy", "--by", "method", "--pair-on", "seed",
          "--compare", "mlp,logreg", "--repeated", "data-sampling", "--test-fraction", "0.3"]),
    ],
)  # fmt: skip
def test_old_spellings_work_hidden_with_a_one_line_notice(old, new, args, tmp_path):
    from vareval import datasets

    path = tmp_path / "runs.csv"
    datasets.load("digits_runs.csv").to_csv(path, index=False)
    old_way = CliRunner().invoke(main, [args[0], str(path), *args[1:]])
    assert old_way.exit_code == 0, old_way.output
    notice = [line for line in old_way.stderr.splitlines() if "deprecated" in line]
    assert notice == [f"warning: {old} is deprecated and will be removed; use {new}."] or (
        old == "--repeated" and len(notice) == 1 and new in notice[0]
    )
    assert old not in CliRunner().invoke(main, [args[0], "--help"]).output
    new_args = [a for a in args[1:]]
    i = new_args.index(old)
    new_args[i : i + 1 + (old == "--repeated")] = new.split()
    new_way = CliRunner().invoke(main, [args[0], str(path), *new_args])
    assert new_way.exit_code == 0 and new_way.stderr == ""
    assert new_way.stdout == old_way.stdout


def test_old_and_new_spelling_together_are_refused(tmp_path):
    from vareval import datasets

    path = tmp_path / "runs.csv"
    datasets.load("digits_runs.csv").to_csv(path, index=False)
    r = _run("best-of-k", path, "--metric", "accuracy", "--by", "method",
             "--resamples", "10", "--n-sim", "20")  # fmt: skip
    assert r.exit_code == 2
    assert r.stderr.strip() == "error: give --resamples or its old spelling --n-sim, not both."


@pytest.mark.parametrize("command", ["paired", "plan"])
def test_compare_is_the_one_spelling_of_two_methods(command, tmp_path):
    """paired and plan take --compare a,b as sequential and allocate do; --a/--b for one release."""
    from vareval import datasets

    path = tmp_path / "runs.csv"
    datasets.load("digits_runs.csv").to_csv(path, index=False)
    base = [command, str(path), "--metric", "accuracy", "--by", "method", "--pair-on", "seed"]
    extra = ["--effect", "0.002"] if command == "plan" else []
    for other in ("sequential", "allocate"):
        assert "--compare" in help_options((other,))
    assert "--compare" in help_options((command,)) and "--a" not in help_options((command,))
    new = CliRunner().invoke(main, [*base, "--compare", "mlp,logreg", *extra, "--json"])
    old = CliRunner().invoke(main, [*base, "--a", "mlp", "--b", "logreg", *extra, "--json"])
    assert new.exit_code == 0 and new.stderr == "", new.output
    assert old.exit_code == 0 and old.stdout == new.stdout
    assert old.stderr.strip() == (
        "warning: --a/--b are deprecated and will be removed; use --compare a,b."
    )
    both = CliRunner().invoke(main, [*base, "--compare", "mlp,logreg", "--a", "mlp", *extra])
    assert both.exit_code == 2 and "not both" in both.output
    bad = CliRunner().invoke(main, [*base, "--compare", "mlp", *extra])
    assert bad.exit_code == 2 and "--compare must name two things" in bad.output
