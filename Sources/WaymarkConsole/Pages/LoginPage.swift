/// Sign-in: a token, or a user name and password, as the configuration allows.
enum LoginPage {
    static func html(site: String, tokens: Bool, users: Bool, error: String?, next: String) -> String {
        var forms = ""
        if users {
            forms += """
                <form method="post" action="/login"><input type="hidden" name="next" value="\(HTML.escape(next))">
                <label>User <input name="user" autocomplete="username" required></label>
                <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
                <button>Sign in</button></form>
                """
        }
        if tokens {
            forms += """
                <form method="post" action="/login"><input type="hidden" name="next" value="\(HTML.escape(next))">
                <label>Access token <input name="token" type="password" autocomplete="off" required></label>
                <button>Sign in with token</button></form>
                """
        }
        let body = """
            <div class="login"><h1>Sign in</h1>
            \(error.map { "<p class=\"error\">\(HTML.escape($0))</p>" } ?? "")
            \(forms)</div>
            """
        return HTML.page(title: "Sign in", site: site, active: nil, body: body)
    }
}
