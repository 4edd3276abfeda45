"""A griffe extension of the API reference: the docstrings' Sphinx roles
(``:class:`~sharded.errors.WorkerLost```, ``:func:`sharded.init```) become code spans, which
Markdown shows as code (it has no roles; they would print as ``:class:`` text). ``~`` keeps
the last dotted part, as in Sphinx."""

import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")


def plain(text: str) -> str:
    """``text`` with every role replaced by a code span of its target.

    Examples
    --------
    >>> plain("raises :class:`~sharded.errors.WorkerLost` (see :mod:`sharded.io`)")
    'raises `WorkerLost` (see `sharded.io`)'
    """
    return ROLE.sub(lambda m: f"`{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}`", text)


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain(obj.docstring.value)
