import subprocess
import sys


def test_help_imports_no_heavy_library():
    """`vareval --help` must stay fast: building the command imports no numpy, scipy or pandas."""
    code = (
        "import sys; from vareval.cli import main; "
        "heavy = [m for m in ('numpy', 'scipy', 'pandas', 'matplotlib') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
