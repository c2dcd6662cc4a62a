import Foundation
import Hummingbird

extension ConsoleRoutes {
    /// `GET /login` (the form), `POST /login` (token, or user and password → session cookie),
    /// `POST /logout`.
    func registerSignIn(on router: Router<BasicRequestContext>) {
        let auth = AuthMiddleware<BasicRequestContext>(credentials: credentials, sessions: sessions, disabled: authDisabled, secureCookie: false)
        router.get("/login") { request, _ in
            Self.html(LoginPage.html(site: site.id, tokens: !credentials.tokenDigests.isEmpty, users: !credentials.users.isEmpty,
                                     error: nil, next: Self.safeNext(request.uri.queryParameters.get("next"))))
        }
        router.post("/login") { request, _ in
            let body = try await request.body.collect(upTo: 16 * 1024)
            let form = Self.formFields(String(buffer: body))
            let next = Self.safeNext(form["next"])
            let ok: Bool
            if let token = form["token"], !token.isEmpty {
                ok = credentials.accepts(token: token)
            } else if let user = form["user"], let password = form["password"] {
                ok = credentials.accepts(user: user, password: password)
            } else {
                ok = false
            }
            guard ok else {
                logger.notice("sign-in refused")
                return Self.html(LoginPage.html(site: site.id, tokens: !credentials.tokenDigests.isEmpty, users: !credentials.users.isEmpty,
                                                error: "Not signed in: wrong token, user or password.", next: next), status: .unauthorized)
            }
            var response = Response.redirect(to: next, type: .found)
            response.setCookie(auth.sessionCookie(sessions.open()))
            return response
        }
        router.post("/logout") { request, _ in
            if let id = request.cookies[SessionStore.cookieName]?.value { sessions.close(id) }
            var response = Response.redirect(to: "/login", type: .found)
            response.setCookie(Cookie(name: SessionStore.cookieName, value: "", maxAge: 0, path: "/"))
            return response
        }
    }

    /// Only a local path (no scheme or host), so sign-in never redirects elsewhere.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\") else { return "/" }
        return next
    }

    /// `application/x-www-form-urlencoded` fields.
    static func formFields(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                let spaced = s.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            out[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return out
    }
}
