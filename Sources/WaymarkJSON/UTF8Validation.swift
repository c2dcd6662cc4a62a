/// UTF-8 as RFC 3629 defines it: no overlong forms, no encoded surrogates (U+D800…U+DFFF), nothing
/// above U+10FFFF. Checks in place, without building a String.
@usableFromInline
enum UTF8Validation {
    @usableFromInline
    static func isValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = b.count
        @inline(__always) func isContinuation(_ k: Int) -> Bool { b[k] & 0xC0 == 0x80 }
        while i < n {
            let lead = b[i]
            if lead < 0x80 {
                i += 1
            } else if lead < 0xC2 {
                return false  // a continuation byte, or the lead of an overlong 2-byte form
            } else if lead < 0xE0 {
                guard i + 1 < n, isContinuation(i + 1) else { return false }
                i += 2
            } else if lead < 0xF0 {
                guard i + 2 < n else { return false }
                // E0 needs A0…BF next (no overlong form), ED 80…9F (no surrogate).
                let low: UInt8 = lead == 0xE0 ? 0xA0 : 0x80, high: UInt8 = lead == 0xED ? 0x9F : 0xBF
                guard b[i + 1] >= low, b[i + 1] <= high, isContinuation(i + 2) else { return false }
                i += 3
            } else if lead < 0xF5 {
                guard i + 3 < n else { return false }
                // F0 needs 90…BF next (no overlong form), F4 80…8F (nothing above U+10FFFF).
                let low: UInt8 = lead == 0xF0 ? 0x90 : 0x80, high: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
                guard b[i + 1] >= low, b[i + 1] <= high, isContinuation(i + 2), isContinuation(i + 3) else { return false }
                i += 4
            } else {
                return false
            }
        }
        return true
    }
}
