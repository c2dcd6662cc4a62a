// Benchmarks print figures; they never assert. Run: swift run -c release waymark-bench [NAME]
print("waymark-bench: no benchmarks yet")
