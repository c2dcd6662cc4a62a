import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A local HTTP server standing in for a venue's CRM: records every request it receives and
/// answers 503 until `failUntil`, then 200 — a receiver that is down for a while.
final class WebhookReceiver: @unchecked Sendable {
    struct Request: Sendable {
        var headers: [String: String]
        var body: [UInt8]
        var receivedAt: Date
        var status: Int
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: (any Channel)?
    private let lock = NSLock()
    private var received: [Request] = []
    let failUntil: Date

    init(failFor seconds: Double) throws {
        failUntil = Date().addingTimeInterval(seconds)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(Handler(receiver: self))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
    }

    var port: Int { channel?.localAddress?.port ?? 0 }
    var url: String { "http://127.0.0.1:\(port)/hooks/waymark" }

    var requests: [Request] {
        lock.lock(); defer { lock.unlock() }
        return received
    }

    /// Records a request and says what to answer.
    fileprivate func record(headers: HTTPHeaders, body: [UInt8]) -> Int {
        let now = Date()
        let status = now < failUntil ? 503 : 200
        var flat: [String: String] = [:]
        for (name, value) in headers { flat[name.lowercased()] = value }
        lock.lock()
        received.append(Request(headers: flat, body: body, receivedAt: now, status: status))
        lock.unlock()
        return status
    }

    func close() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// One connection's requests: collects the body, answers at the end.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let receiver: WebhookReceiver
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(receiver: WebhookReceiver) { self.receiver = receiver }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let h):
                head = h
                body = []
            case .body(var buffer):
                body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                guard let head else { return }
                let status = receiver.record(headers: head.headers, body: body)
                let text = status == 200 ? "ok" : "down for maintenance"
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: String(text.utf8.count))
                headers.add(name: "Content-Type", value: "text/plain")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .init(statusCode: status), headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                self.head = nil
            }
        }
    }
}
