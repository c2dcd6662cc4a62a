import Foundation
import Hummingbird
import HummingbirdCore
import Logging

/// Lets a request through when it carries a valid session cookie or bearer token (or a `token`
/// query parameter, which is swapped at once for a session cookie and removed from the address);
/// otherwise a browser is sent to the sign-in page and anything else gets 401.
struct AuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let credentials: ConsoleCredentials
    let sessions: SessionStore
    let disabled: Bool
    let secureCookie: Bool

    static func isPublic(_ path: String) -> Bool {
        path == "/login" || path == "/healthz" || path.hasPrefix("/assets/")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if disabled || Self.isPublic(path) { return try await next(request, context) }
        if let session = request.cookies[SessionStore.cookieName]?.value, sessions.isValid(session) {
            return try await next(request, context)
        }
        if let header = request.headers[.authorization], header.hasPrefix("Bearer "),
           credentials.accepts(token: String(header.dropFirst(7))) {
            return try await next(request, context)
        }
        if request.method == .get, let token = request.uri.queryParameters.get("token"), credentials.accepts(token: token) {
            var response = Response.redirect(to: Self.withoutToken(request.uri), type: .found)
            response.setCookie(sessionCookie(sessions.open()))
            return response
        }
        if request.method == .get && !path.hasSuffix(".csv") && path != "/live/events" {
            return Response.redirect(to: "/login?next=\(HTML.urlComponent(path))", type: .found)
        }
        return Response(status: .unauthorized, headers: [.contentType: "text/plain; charset=utf-8", .wwwAuthenticate: "Bearer"],
                        body: .init(byteBuffer: .init(string: "sign in first: /login, or send Authorization: Bearer TOKEN\n")))
    }

    func sessionCookie(_ id: String) -> Cookie {
        Cookie(name: SessionStore.cookieName, value: id, maxAge: Int(sessions.lifetimeS), path: "/", secure: secureCookie,
               httpOnly: true, sameSite: .strict)
    }

    /// The address without its `token` parameter.
    static func withoutToken(_ uri: URI) -> String {
        let kept = (uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") }
        return uri.path + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }
}

/// One log line per request at info: method, route pattern (never the address itself, which can
/// hold a device id or a token), status and duration; the full path only at debug.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        let ms = (ContinuousClock.now - started) / .milliseconds(1)
        let route = context.endpointPath ?? (AuthMiddleware<Context>.isPublic(request.uri.path) ? request.uri.path : "(unrouted)")
        logger.info("request", metadata: ["method": .string(request.method.rawValue), "route": .string(route),
                                          "status": .stringConvertible(response.status.code), "ms": .string(String(format: "%.1f", ms))])
        logger.debug("request path", metadata: ["path": .string(request.uri.path)])
        return response
    }
}
