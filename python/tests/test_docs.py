"""The examples of the documentation run: fpkit-python(7)'s EXAMPLES
session as a doctest (its outputs must be what it shows), README.md's
Python example as a script."""

import doctest
import re

import fpkit
from conftest import _path


def test_man_page_examples():
    text = open(_path("FPKIT_SRCDIR", "man", "fpkit-python.7"), encoding="utf-8").read()
    block = re.search(r"^\.Sh EXAMPLES\n\.Bd -literal[^\n]*\n(.*?)^\.Ed$", text, re.S | re.M)
    assert block, "fpkit-python.7 has no EXAMPLES block"
    session = block.group(1).replace("\\&", "").replace("\\e", "\\").replace("\\-", "-")
    test = doctest.DocTestParser().get_doctest(session, {}, "fpkit-python.7", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and len(test.examples) > 10


def test_readme_example():
    text = open(_path("FPKIT_SRCDIR", "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)
    assert blocks, "README.md has no ```python example"
    g = {}
    exec(compile(blocks[0], "README.md", "exec"), g)
    assert isinstance(g["s"], fpkit.Stats)
