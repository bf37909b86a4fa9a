"""Reports built from run results (terminal now; markdown, JSON, JUnit and HTML later)."""
