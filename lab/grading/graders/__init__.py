"""One module per exercise family; each function returns an exercise's checks for a `lab.grading.checks.Context`."""
