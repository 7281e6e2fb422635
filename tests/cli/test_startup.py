import subprocess
import sys


def test_help_imports_no_heavy_library():
    """`vareval --help` must stay fast: building the command imports no numpy, scipy or pandas.

    Nor the compiled bootstrap kernel, which is loaded when a bootstrap runs.
    """
    code = (
        "import sys; from vareval.cli import main; "
        "heavy = [m for m in ('numpy', 'scipy', 'pandas', 'matplotlib', "
        "'vareval.stats.testset._bootkernel') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_vareval_warnings_print_as_one_line():
    import warnings

    import click
    from click.testing import CliRunner

    from vareval.cli import main
    from vareval.errors import VarevalWarning

    @click.command("warn-once")
    def warn_once():
        warnings.warn("ties in column 'f1'", VarevalWarning, stacklevel=1)

    main.add_command(warn_once)
    try:
        out = CliRunner().invoke(main, ["warn-once"])
    finally:
        main.commands.pop("warn-once")
    assert out.exit_code == 0
    assert out.output.strip() == "warning: ties in column 'f1'"
