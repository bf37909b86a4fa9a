"""Packaging glue that pyproject.toml cannot express: ship docs/ inside the wheel.

Error messages point at the file-format documentation; an adopter who installed
the wheel has no docs/ folder, so the wheel carries it as ``harness/docs`` and
``python -m harness docs`` prints it. Every other setting lives in pyproject.toml;
packages are still discovered automatically, so a new subpackage needs no edit here.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["harness", "harness.*"]), "harness.docs"],
    package_dir={"harness.docs": "docs"},
)
