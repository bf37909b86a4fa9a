"""The JUnit XML report: one testcase per scenario x iteration, failures with their reasons."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conftest import Project
from reports_support import blocked_project


def test_junit_has_one_testcase_per_scenario_iteration(project: Project) -> None:
    blocked_project(project, passing=3)
    project.scenario("helper/acme/twice", {"decision": "ask"},
                     expect=[{"json_path": {"path": "decision", "equals": "ask"}}], iterations=2)
    project.scenario("helper/acme/unrecorded", {"decision": "ask"})
    project.record("--scenario", "case-*", "--scenario", "inject", "--scenario", "twice")
    assert project.run("run", "--report", "junit").code == 1
    path = next(project.results.rglob("junit.xml"))
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    helper = next(s for s in root.iter("testsuite") if s.get("name") == "helper")
    cases = helper.findall("testcase")
    names = sorted(f"{c.get('classname')}::{c.get('name')}" for c in cases)
    acme, globex = "eval-datasets.helper.acme", "eval-datasets.helper.globex"
    assert names == [f"{acme}::case-00[0]", f"{acme}::case-02[0]", f"{acme}::twice[0]",
                     f"{acme}::twice[1]", f"{acme}::unrecorded[0]",
                     f"{globex}::case-01[0]", f"{globex}::inject[0]"]
    assert (helper.get("tests"), helper.get("failures"), helper.get("errors")) == ("7", "1", "1")
    inject = next(c for c in cases if c.get("name") == "inject[0]")
    assert inject.find("properties") is None  # the Jenkins schema refuses testcase properties
    details = dict(line.split(": ", 1) for line in (inject.findtext("system-out") or "").splitlines())
    assert details["agent"] == "helper" and details["tenant"] == "globex"
    assert details["type"] == "adversarial" and details["test_id"] == "tc_adv_003"
    assert details["judge.relevance"] == "4 (good) scripted"  # its judge answer came from the script
    container = helper.find("properties")
    assert container is not None
    suite_props = {p.get("name"): p.get("value") for p in container}
    assert suite_props["agent"] == "helper" and suite_props["run_id"]
    failure = inject.find("failure")
    assert failure is not None and failure.get("type") == "rejected"
    assert failure.get("message", "").startswith("BLOCKING (negative/adversarial reject): decides")
    assert "[reject] decides: decision: expected 'refuse', found 'ask'" in (failure.text or "")
    miss = next(c for c in cases if c.get("name") == "unrecorded[0]").find("error")
    assert miss is not None and miss.get("type") == "missed"
    metrics = next(s for s in root.iter("testsuite") if s.get("name") == "metrics")
    (metric,) = metrics.findall("testcase")
    assert metric.get("name") == "unsafe_refusal_rate" and metric.find("failure") is not None
    assert root.get("tests") == "8"


def test_junit_is_valid_xml_even_with_control_characters(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/odd", {"answer": "bell\u0007 and nul\u0000"},
                     expect=[{"json_path": {"path": "answer", "equals": "x"}}])
    project.record()
    project.run("run")
    xml = project.run("report", "--format", "junit").out
    root = ET.fromstring(xml)
    assert len(list(root.iter("testcase"))) == 1
