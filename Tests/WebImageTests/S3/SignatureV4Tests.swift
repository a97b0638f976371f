import Foundation
import Testing
@testable import WebImage
@testable import WebImageS3

/// AWS Signature Version 4 against AWS's published examples: the S3 developer guide's
/// "Signature calculations for the Authorization header" (GET object with a range, PUT object,
/// GET bucket lifecycle, GET bucket list) and the SigV4 test suite's `get-vanilla`.
@Suite struct SignatureV4Tests {
    static let s3Example = SignatureV4(credentials: S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                                                                   secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                                       region: "us-east-1")
    /// 2013-05-24T00:00:00Z.
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)

    func signature(_ headers: [String: String]) -> String? {
        headers["authorization"]?.components(separatedBy: "Signature=").last
    }

    @Test func getObjectWithARange() throws {
        let url = try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt"))
        let headers = Self.s3Example.signed(method: "GET", url: url, headers: ["Range": "bytes=0-9"],
                                            payloadHash: SignatureV4.emptyPayloadHash, date: Self.s3Date)
        #expect(headers["x-amz-date"] == "20130524T000000Z")
        #expect(headers["authorization"] == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func putObject() throws {
        let url = try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test%24file.text"))
        let body = Array("Welcome to Amazon S3.".utf8)
        let hash = SignatureV4.hex(HMAC.digest(body))
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let headers = Self.s3Example.signed(method: "PUT", url: url,
                                            headers: ["Date": "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY"],
                                            payloadHash: hash, date: Self.s3Date)
        #expect(signature(headers) == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
        #expect(headers["authorization"]?.contains("SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,") == true)
    }

    @Test func getBucketLifecycleAndList() throws {
        let lifecycle = Self.s3Example.signed(method: "GET", url: try #require(URL(string: "https://examplebucket.s3.amazonaws.com/?lifecycle")),
                                              headers: [:], payloadHash: SignatureV4.emptyPayloadHash, date: Self.s3Date)
        #expect(signature(lifecycle) == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
        let list = Self.s3Example.signed(method: "GET", url: try #require(URL(string: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J")),
                                         headers: [:], payloadHash: SignatureV4.emptyPayloadHash, date: Self.s3Date)
        #expect(signature(list) == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test func theTestSuitesGetVanilla() throws {
        let signer = SignatureV4(credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
                                 region: "us-east-1", service: "service")
        let headers = signer.signed(method: "GET", url: try #require(URL(string: "https://example.amazonaws.com/")), headers: [:],
                                    payloadHash: SignatureV4.emptyPayloadHash, date: Date(timeIntervalSince1970: 1_440_938_160))
        #expect(headers["x-amz-date"] == "20150830T123600Z")
        #expect(headers["authorization"] == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    @Test func aSessionTokenIsSentAndSigned() throws {
        let signer = SignatureV4(credentials: S3Credentials(accessKeyID: "A", secretAccessKey: "S", sessionToken: "T"), region: "eu-west-1")
        let headers = signer.signed(method: "GET", url: try #require(URL(string: "http://127.0.0.1:9000/b/k")), headers: [:],
                                    payloadHash: SignatureV4.emptyPayloadHash, date: Self.s3Date)
        #expect(headers["x-amz-security-token"] == "T")
        #expect(headers["authorization"]?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true)
        #expect(SignatureV4.hostHeader(try #require(URL(string: "http://127.0.0.1:9000/b"))) == "127.0.0.1:9000")
        #expect(SignatureV4.hostHeader(try #require(URL(string: "https://h.example:443/b"))) == "h.example")
    }

    @Test func encodingIsRFC3986() {
        #expect(SignatureV4.encode("a b/c~d_e.f-g$h+é") == "a%20b%2Fc~d_e.f-g%24h%2B%C3%A9")
    }

    @Test func credentialsNeverShowTheirSecret() {
        let credentials = S3Credentials(accessKeyID: "AKIAEXAMPLE", secretAccessKey: "topsecret", sessionToken: "tok")
        #expect(!credentials.description.contains("topsecret") && !credentials.description.contains("tok,") && credentials.description.contains("AKIAEXAMPLE"))
        #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_SESSION_TOKEN": ""])
                == S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a"]) == nil)
    }
}
