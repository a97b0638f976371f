import CLibHiredis
import Foundation

/// One reply of a Redis server, copied out of hiredis's reply tree.
enum RedisReply: Sendable, Hashable {
    case string(Data)
    case status(String)
    case integer(Int)
    case null
    case array([RedisReply])
    /// An error reply (`-ERR …`, `-OOM …`, `-NOAUTH …`): the command failed, the connection is fine.
    case error(String)

    /// Copies `reply` (owned by the caller, who frees it).
    init(_ reply: UnsafePointer<redisReply>) {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            self = .string(value.str.map { Data(bytes: $0, count: Int(value.len)) } ?? Data())
        case REDIS_REPLY_STATUS:
            self = .status(value.str.map { String(cString: $0) } ?? "")
        case REDIS_REPLY_ERROR:
            self = .error(value.str.map { String(cString: $0) } ?? "error")
        case REDIS_REPLY_INTEGER:
            self = .integer(Int(value.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(value.elements))
            for index in 0..<Int(value.elements) {
                if let element = value.element[index] { elements.append(RedisReply(element)) } else { elements.append(.null) }
            }
            self = .array(elements)
        default:
            self = .null
        }
    }

    /// The error text of an error reply, else `nil`.
    var errorText: String? {
        if case .error(let text) = self { return text }
        return nil
    }
}
