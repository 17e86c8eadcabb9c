package kubecluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is what the API server needs to serve and sign, as files: one
// self-signed certificate that is both the serving certificate and the CA
// the kubeconfigs trust (no client certificates: everyone authenticates by
// token), the service-account signing key pair, and the token file of the
// one user, an administrator (group system:masters, which RBAC allows
// everything). Generated fresh per cluster, so nothing secret is committed.
type pki struct {
	caFile, caPEM           string
	servingCert, servingKey string
	saPrivate, saPublic     string
	tokenFile, token        string
}

func newPKI(dir string) (*pki, error) {
	p := &pki{
		caFile: filepath.Join(dir, "ca.crt"), servingKey: filepath.Join(dir, "ca.key"),
		saPrivate: filepath.Join(dir, "sa.key"), saPublic: filepath.Join(dir, "sa.pub"),
		tokenFile: filepath.Join(dir, "tokens.csv"),
	}
	p.servingCert = p.caFile
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kube-apiserver (tracelab test)"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	p.caPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if err := writePrivateKey(p.servingKey, key); err != nil {
		return nil, err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writePrivateKey(p.saPrivate, sa); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	token := make([]byte, 16)
	rand.Read(token)
	p.token = hex.EncodeToString(token)
	for path, content := range map[string]string{
		p.caFile:    p.caPEM,
		p.saPublic:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		p.tokenFile: p.token + ",admin,admin,system:masters\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func writePrivateKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}
