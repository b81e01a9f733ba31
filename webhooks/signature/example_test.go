package signature_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/edgecms/edgecms/webhooks/signature"
)

// A receiver verifies the raw body before parsing it, answers 2xx only to
// authentic deliveries, and uses webhook-id as its idempotency key.
func ExampleVerifier() {
	// During a rotation both the new and the previous secret are valid.
	verifier, err := signature.NewVerifier("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		log.Fatal(err)
	}
	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		err = verifier.Verify(r.Header, body, time.Now())
		switch {
		case errors.Is(err, signature.ErrTimestampTooOld), errors.Is(err, signature.ErrTimestampTooNew):
			http.Error(w, "stale delivery", http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// Authentic: handle body once per r.Header.Get(signature.HeaderID).
		w.WriteHeader(http.StatusNoContent)
	})

	// What the sender does for every attempt.
	deliver := func(body []byte, sent time.Time, secret string) int {
		sig, err := signature.Sign("msg_2bXhZ0dDm1kZ9cV", sent, body, secret)
		if err != nil {
			log.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/hooks/edgecms", bytes.NewReader(body))
		req.Header.Set(signature.HeaderID, "msg_2bXhZ0dDm1kZ9cV")
		req.Header.Set(signature.HeaderTimestamp, signature.Timestamp(sent))
		req.Header.Set(signature.HeaderSignature, sig)
		rec := httptest.NewRecorder()
		receiver.ServeHTTP(rec, req)
		return rec.Code
	}

	body := []byte(`{"type":"content.published","id":42}`)
	fmt.Println("authentic:", deliver(body, time.Now(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
	fmt.Println("replayed an hour later:", deliver(body, time.Now().Add(-time.Hour), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
	fmt.Println("other secret:", deliver(body, time.Now(), "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"))
	// Output:
	// authentic: 204
	// replayed an hour later: 400
	// other secret: 401
}

// Sign gives the webhook-signature header value for one attempt.
func ExampleSign() {
	sig, err := signature.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0),
		[]byte(`{"test": 2432232314}`), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sig)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}

// During a secret rotation the sender signs with every valid secret; a
// receiver that knows either one accepts the delivery.
func ExampleSign_rotation() {
	body := []byte(`{"test": 2432232314}`)
	sent := time.Unix(1614265330, 0)
	sig, err := signature.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", sent, body,
		"whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", // new
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // previous
	)
	if err != nil {
		log.Fatal(err)
	}
	h := http.Header{}
	h.Set(signature.HeaderID, "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set(signature.HeaderTimestamp, signature.Timestamp(sent))
	h.Set(signature.HeaderSignature, sig)
	err = signature.Verify([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, h, body, sent)
	fmt.Println("receiver with the previous secret:", err)
	// Output: receiver with the previous secret: <nil>
}

// NewSecret makes the secret a webhook signs with.
func ExampleNewSecret() {
	secret, err := signature.NewSecret()
	if err != nil {
		log.Fatal(err)
	}
	key, _ := signature.ParseSecret(secret)
	fmt.Println(secret[:6], len(key))
	// Output: whsec_ 32
}
