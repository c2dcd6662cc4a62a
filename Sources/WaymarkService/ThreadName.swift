import Foundation

/// Names the calling thread for `top -H`, `ps -L` and /proc (Foundation's `Thread.name` does not
/// reach the kernel on Linux). Names longer than 15 bytes are cut by the kernel; failures are
/// ignored — a name is a convenience, never a reason to stop.
public enum ThreadName {
    public static func set(_ name: String) {
        guard let handle = FileHandle(forWritingAtPath: "/proc/thread-self/comm") else { return }
        defer { try? handle.close() }
        try? handle.write(contentsOf: Data(name.utf8.prefix(15)))
    }
}
