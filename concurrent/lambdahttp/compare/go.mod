module github.com/lmigo/lmigo/concurrent/lambdahttp/compare

go 1.26

replace github.com/lmigo/lmigo => ../../../

require github.com/lmigo/lmigo v0.0.0-00010101000000-000000000000

require github.com/awslabs/aws-lambda-go-api-proxy v0.16.2 // indirect
