"""jinja2 templates of packaging/templates (POM, Maven metadata, Package.swift, app projects)."""

from __future__ import annotations

import os

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


def environment(folder: str = TEMPLATES):
    try:
        import jinja2
    except ImportError as e:
        from .errors import PackageError
        raise PackageError("pocket package needs jinja2 (pip install 'pocket[export]' or jinja2)") from e
    return jinja2.Environment(loader=jinja2.FileSystemLoader(folder), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, autoescape=False)


def render(template: str, **values) -> str:
    return environment().get_template(template).render(**values)
