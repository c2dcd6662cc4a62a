import Foundation

/// Opens output files the way a Unix tool should: the path given is opened for writing, created
/// when missing and truncated when it is a regular file — never replaced. Writing a temporary file
/// and renaming it over the path (what `FileManager.createFile` does) would turn `/dev/null`, a
/// FIFO or a symbolic link into a regular file, which as root breaks the whole machine (issue 21).
public enum OutputFile {
    /// A handle writing to `path` (created with mode 0644 when missing). A FIFO blocks here until
    /// a reader opens it, as with any Unix tool. Throws for a directory or what cannot be opened.
    public static func open(_ path: String) throws(OutputError) -> FileHandle {
        var info = stat()
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw OutputError(path: path, reason: "is a directory; give a file name")
        }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let why = String(cString: strerror(errno))
            throw OutputError(path: path, reason: "cannot open it for writing (\(why)); check that the directory exists and is writable")
        }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// Writes `text` to `path` through `open(_:)`.
    public static func write(_ text: String, to path: String) throws(OutputError) {
        let handle = try open(path)
        do { try handle.write(contentsOf: Data(text.utf8)) } catch {
            throw OutputError(path: path, reason: "write failed: \(error)")
        }
    }
}
