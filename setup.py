"""Packaging glue that pyproject.toml cannot express: ship docs/ inside the wheel.

Error messages point at the file-format documentation; an adopter who installed
the wheel has no docs/ folder, so the wheel carries it as ``harness/docs`` and
``python -m harness docs`` prints it. Every other setting lives in pyproject.toml;
packages are still discovered automatically, so a new subpackage needs no edit here.
"""

from setuptools import find_namespace_packages, setup

setup(
    # namespace discovery: harness/schemas/ holds only data, and setuptools warns about a data
    # folder that is importable but not listed as a package
    packages=[*find_namespace_packages(include=["harness", "harness.*"], exclude=["*.__pycache__"]),
              "harness.docs"],
    package_dir={"harness.docs": "docs"},
)
